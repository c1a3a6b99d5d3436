// helm for the chart's tests (deploy/chart), built from Go modules by scripts/build-helm.sh into a
// cache outside the repository. A missing helm fails the tests with the command that builds it:
// they are never skipped. Each run gets its own HOME and Helm directories under a temp dir, so
// nothing outside it (a developer's repositories, plugins or kubeconfig) takes part.

import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadAll } from 'js-yaml';

const REPO = resolve(import.meta.dirname, '../..');
const BUILD_SCRIPT = 'scripts/build-helm.sh';
export const CHART = join(REPO, 'deploy/chart');

export interface HelmResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A Kubernetes object as far as the tests read it. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

/** The built helm's path, or an error that says how to build it (never a silent skip). */
export function helmBinary(): string {
  const check = spawnSync('bash', [join(REPO, BUILD_SCRIPT), '--check'], { encoding: 'utf8', timeout: 30_000 });
  const path = check.stdout.trim();
  if (check.status !== 0 || path === '') {
    throw new Error(
      `helm is not built (or is stale) at ${path || 'its cache'}. Build it with \`${BUILD_SCRIPT}\` ` +
        `(docs/testing.md#helm); npm run check and .ci/run do it. ${check.stderr}`.trim(),
    );
  }
  return path;
}

/** Runs helm with its own home under a temp dir; `cleanup()` removes it. */
export class Helm {
  private constructor(
    readonly binary: string,
    readonly home: string,
  ) {}

  static async create(): Promise<Helm> {
    const binary = helmBinary();
    return new Helm(binary, await mkdtemp(join(tmpdir(), 'helm-test-')));
  }

  /** Runs helm (bounded); resolves with its exit status, never throws on it. */
  run(args: readonly string[], options: { kubeconfig?: string; timeoutMs?: number } = {}): Promise<HelmResult> {
    const env = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: this.home,
      HELM_CACHE_HOME: join(this.home, 'cache'),
      HELM_CONFIG_HOME: join(this.home, 'config'),
      HELM_DATA_HOME: join(this.home, 'data'),
      // Without a kubeconfig, helm must never find one of the machine's own.
      KUBECONFIG: options.kubeconfig ?? join(this.home, 'no-kubeconfig'),
    };
    return new Promise((done) => {
      execFile(
        this.binary,
        args,
        { env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
          done({ status, stdout, stderr });
        },
      );
    });
  }

  /**
   * `helm template` of deploy/chart as release `agent-upgrade-controller` in `agent-upgrade-system`,
   * with `--set` values; the objects it renders, in order.
   */
  async template(set: readonly string[] = [], extra: readonly string[] = []): Promise<KubeObject[]> {
    const rendered = await this.run([
      'template',
      'agent-upgrade-controller',
      CHART,
      '--namespace',
      'agent-upgrade-system',
      ...set.flatMap((value) => ['--set', value]),
      ...extra,
    ]);
    if (rendered.status !== 0) throw new Error(`helm template failed (${rendered.status}): ${rendered.stderr}`);
    return parseObjects(rendered.stdout);
  }

  async cleanup(): Promise<void> {
    await rm(this.home, { recursive: true, force: true });
  }
}

/** The objects of a multi-document YAML stream, without the empty documents. */
export function parseObjects(text: string): KubeObject[] {
  return loadAll(text).filter((doc): doc is KubeObject => typeof doc === 'object' && doc !== null);
}

/** The one object of `kind` (and `name`, when given); throws when there is not exactly one. */
export function one(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`${found.length} objects of kind ${kind}${name ? ` named ${name}` : ''}`);
  return found[0] as KubeObject;
}
