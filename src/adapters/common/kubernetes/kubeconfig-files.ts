import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { ClusterError } from '../../../domain/common/port-errors.js';

/** Kubeconfigs, tokens, certificates and keys are small; a bigger file is a mistake, not data. */
const SECRET_FILE_MAX_BYTES = 1024 * 1024;

/** One cluster, user or context of a kubeconfig, with the file that defined it (relative paths start there). */
export interface KubeconfigEntry {
  readonly value: Record<string, unknown>;
  readonly file: string;
}

/** Kubeconfig files merged as kubectl merges them. */
export interface MergedKubeconfig {
  /** The files that were read, in order. */
  readonly files: readonly string[];
  readonly currentContext: string | null;
  readonly clusters: ReadonlyMap<string, KubeconfigEntry>;
  readonly users: ReadonlyMap<string, KubeconfigEntry>;
  readonly contexts: ReadonlyMap<string, KubeconfigEntry>;
}

/**
 * Reads and merges kubeconfig files the way kubectl merges KUBECONFIG: for each cluster, user and
 * context name the first file that defines it wins, and `current-context` comes from the first
 * file that sets one. With `skipMissing` (a KUBECONFIG list) files that do not exist are skipped,
 * as kubectl skips them; when none exists at all it is an error.
 */
export async function readKubeconfigs(paths: readonly string[], skipMissing: boolean): Promise<MergedKubeconfig> {
  const files: string[] = [];
  let currentContext: string | null = null;
  const clusters = new Map<string, KubeconfigEntry>();
  const users = new Map<string, KubeconfigEntry>();
  const contexts = new Map<string, KubeconfigEntry>();
  for (const path of paths) {
    const text = await readKubeconfigText(path, skipMissing);
    if (text === null) continue;
    files.push(path);
    let document: unknown;
    try {
      document = load(text);
    } catch {
      throw new ClusterError(null, `the kubeconfig ${path} is not valid YAML`);
    }
    const config = asRecord(document);
    const named = config['current-context'];
    if (currentContext === null && typeof named === 'string' && named !== '') currentContext = named;
    addEntries(clusters, config['clusters'], 'cluster', path);
    addEntries(users, config['users'], 'user', path);
    addEntries(contexts, config['contexts'], 'context', path);
  }
  if (files.length === 0) throw new ClusterError(null, `none of the kubeconfig files ${paths.join(', ')} exists`);
  return { files, currentContext, clusters, users, contexts };
}

function addEntries(into: Map<string, KubeconfigEntry>, list: unknown, field: string, file: string): void {
  if (!Array.isArray(list)) return;
  for (const item of list) {
    const entry = asRecord(item);
    const name = entry['name'];
    if (typeof name === 'string' && !into.has(name)) into.set(name, { value: asRecord(entry[field]), file });
  }
}

async function readKubeconfigText(path: string, skipMissing: boolean): Promise<string | null> {
  try {
    return (await readBounded(path)).toString('utf8');
  } catch (error) {
    if (skipMissing && ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return null;
    throw error;
  }
}

/** A path named in `file`, which a relative path is relative to (kubectl's rule). */
export function pathFrom(file: string, path: string): string {
  return isAbsolute(path) ? path : join(dirname(file), path);
}

/** A credential or configuration file, bounded; a ClusterError names the path and the errno, never the content. */
export async function readBounded(path: string): Promise<Buffer> {
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch (error) {
    const failure = new ClusterError(
      null,
      `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    failure.cause = error;
    throw failure;
  }
  if (content.length > SECRET_FILE_MAX_BYTES)
    throw new ClusterError(null, `${path} is larger than ${SECRET_FILE_MAX_BYTES} bytes`);
  return content;
}

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A non-empty string field, or undefined. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
