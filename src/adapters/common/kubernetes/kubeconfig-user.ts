import { stat } from 'node:fs/promises';
import { ClusterError } from '../../../domain/common/port-errors.js';
import { asRecord, pathFrom, text, type KubeconfigEntry } from './kubeconfig-files.js';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;

/** An exec credential plugin as the kubeconfig names it (`users[].user.exec`). */
export interface ExecConfig {
  readonly apiVersion: (typeof EXEC_API_VERSIONS)[number];
  /** Absolute, a bare name looked up on PATH, or resolved against the kubeconfig's folder. */
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly provideClusterInfo: boolean;
  readonly installHint?: string;
}

/** How this user authenticates; files are named, not read: they are read (and re-read) per request. */
export interface UserConfig {
  readonly token?: string;
  readonly tokenFile?: string;
  /** The whole `Basic …` authorization value. */
  readonly basic?: string;
  readonly certData?: Buffer;
  readonly keyData?: Buffer;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly exec?: ExecConfig;
}

/**
 * The user stanza of a kubeconfig. Auth providers are refused (their last in-tree users are
 * gone); an exec plugin is accepted only alone (no token, token file or basic auth beside it) and
 * only from a kubeconfig that nobody but its owner (this user or root) can change, because the
 * daemon runs the command it names with its own privileges.
 */
export async function readUser(entry: KubeconfigEntry | undefined): Promise<UserConfig> {
  if (entry === undefined) return {};
  const { value: user, file } = entry;
  if (user['auth-provider'] !== undefined)
    throw new ClusterError(
      null,
      `the kubeconfig ${file} uses an auth provider, which is not supported; use an exec plugin, a token or a client certificate`,
    );
  const token = text(user['token']);
  const tokenFile = text(user['tokenFile']);
  const username = text(user['username']);
  const password = typeof user['password'] === 'string' ? user['password'] : undefined;
  const basic =
    username !== undefined && password !== undefined
      ? `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
      : undefined;
  const exec = user['exec'] === undefined ? undefined : await readExec(asRecord(user['exec']), file);
  if (exec !== undefined && (token !== undefined || tokenFile !== undefined || basic !== undefined))
    throw new ClusterError(
      null,
      `the kubeconfig ${file} names an exec plugin and also a token or basic auth; keep one`,
    );
  const certData = base64(user['client-certificate-data']);
  const keyData = base64(user['client-key-data']);
  const certFile = certData === undefined ? fileIn(file, user['client-certificate']) : undefined;
  const keyFile = keyData === undefined ? fileIn(file, user['client-key']) : undefined;
  if ((certData !== undefined || certFile !== undefined) !== (keyData !== undefined || keyFile !== undefined))
    throw new ClusterError(
      null,
      `the kubeconfig ${file} names a client certificate without its key, or a key without its certificate`,
    );
  return {
    ...(token === undefined ? {} : { token }),
    ...(tokenFile === undefined ? {} : { tokenFile: pathFrom(file, tokenFile) }),
    ...(basic === undefined ? {} : { basic }),
    ...(certData === undefined ? {} : { certData }),
    ...(keyData === undefined ? {} : { keyData }),
    ...(certFile === undefined ? {} : { certFile }),
    ...(keyFile === undefined ? {} : { keyFile }),
    ...(exec === undefined ? {} : { exec }),
  };
}

async function readExec(exec: Record<string, unknown>, file: string): Promise<ExecConfig> {
  const refuse = (why: string): never => {
    throw new ClusterError(null, `the exec plugin in the kubeconfig ${file} ${why}`);
  };
  const apiVersion = EXEC_API_VERSIONS.find((version) => version === exec['apiVersion']);
  if (apiVersion === undefined) refuse(`needs apiVersion ${EXEC_API_VERSIONS.join(' or ')}`);
  const command = text(exec['command']) ?? refuse('names no command');
  const args = exec['args'] ?? [];
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) refuse('has args that are not strings');
  const env: Record<string, string> = {};
  for (const item of Array.isArray(exec['env']) ? exec['env'] : []) {
    const { name, value } = asRecord(item);
    if (typeof name !== 'string' || typeof value !== 'string') refuse('has an env entry without a name and a value');
    env[name as string] = value as string;
  }
  // The daemon has no terminal: a plugin that must prompt cannot work, one that may prompt is run without one.
  const interactiveMode = exec['interactiveMode'] ?? (apiVersion === EXEC_API_VERSIONS[1] ? 'IfAvailable' : undefined);
  if (interactiveMode !== 'Never' && interactiveMode !== 'IfAvailable')
    refuse(
      interactiveMode === 'Always'
        ? 'needs a terminal (interactiveMode Always), which a daemon never has'
        : 'needs interactiveMode Never or IfAvailable',
    );
  await refuseIfOthersCanWrite(file);
  const hint = text(exec['installHint']);
  return {
    apiVersion: apiVersion as ExecConfig['apiVersion'],
    // kubectl's rule: a command with a slash is a path, relative to the kubeconfig; a bare name is looked up on PATH.
    command: command.includes('/') ? pathFrom(file, command) : command,
    args: args as string[],
    env,
    provideClusterInfo: exec['provideClusterInfo'] === true,
    ...(hint === undefined ? {} : { installHint: hint.slice(0, 500) }),
  };
}

async function refuseIfOthersCanWrite(file: string): Promise<void> {
  const info = await stat(file);
  const owner = process.geteuid?.() ?? 0;
  if ((info.mode & 0o022) !== 0 || (info.uid !== 0 && info.uid !== owner))
    throw new ClusterError(
      null,
      `the kubeconfig ${file} names an exec plugin but can be changed by others than its owner (mode ${(info.mode & 0o777).toString(8)}, uid ${info.uid}); make it owned by this user or root and not group- or world-writable`,
    );
}

function base64(value: unknown): Buffer | undefined {
  const encoded = text(value);
  return encoded === undefined ? undefined : Buffer.from(encoded, 'base64');
}

function fileIn(kubeconfig: string, value: unknown): string | undefined {
  const path = text(value);
  return path === undefined ? undefined : pathFrom(kubeconfig, path);
}
