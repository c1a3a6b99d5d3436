import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { AxiosArtifactSource } from '../../src/adapters/node/http/axios-artifact-source.js';
import { hostArchitecture } from '../../src/adapters/node/host/host-architecture.js';
import type { FetchReport } from '../../src/app/node/artifact/fetch-to-file.js';
import { FLEX_PROFILE, type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { memberNameFor } from '../../src/domain/node/artifact/archive-rules.js';
import { type ErrorCode, exitCodeFor, ExitCode } from '../../src/domain/common/error-codes.js';
import type { Failure } from '../../src/domain/common/failure.js';
import type { ArtifactSource } from '../../src/ports/node/artifact-source.js';
import { startBlackHole, type BlackHole } from '../support/http/black-hole.js';
import { type ForwardProxy, startForwardProxy } from '../support/http/forward-proxy.js';
import { type HostileServer, type HostileServerOptions, startHostileServer } from '../support/http/hostile-server.js';
import { makeScratch, snapshotTree } from '../support/real-tree.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { runCliInMemory } from '../support/run-cli.js';
import { sandboxUpgrader } from '../support/sandbox-upgrader.js';

/**
 * One hostile case = one call. Every refusal is checked three ways:
 *  1. the exact error code (the Result's `failure.code`, or the CLI's JSON `error.code` and its
 *     exit code);
 *  2. nothing written: the scratch tree is identical before and after, the output does not
 *     exist (unless it did before) and no `.tmp-` file is left anywhere;
 *  3. no canary secret anywhere: not in the failure message, any log line, the CLI's stdout or
 *     stderr, nor any file name or file content under the scratch directory.
 * Every HTTP request any harness server received must also have asked for `identity` encoding.
 */

const HOST_ARCH = hostArchitecture();
if (HOST_ARCH === null) throw new Error('the hostile suite needs an amd64 or arm64 host');
export const ARCH = HOST_ARCH;
export const OTHER_ARCH = ARCH === 'amd64' ? 'arm64' : 'amd64';

function must<T>(result: { ok: true; value: T } | { ok: false; failure: Failure }): T {
  if (!result.ok) throw new Error(result.failure.message);
  return result.value;
}

/** The flex member for this host, e.g. `aks-flex-node-linux-amd64`. */
export const MEMBER = must(memberNameFor(FLEX_PROFILE.agent.member, ARCH));
export const OTHER_MEMBER = must(memberNameFor(FLEX_PROFILE.agent.member, OTHER_ARCH));

/** A plausible payload; only its bytes matter for fetch. */
export const PAYLOAD = new Uint8Array(
  Buffer.from('\x7fELF\x02\x01\x01\0 hostile-suite agent payload\n'.repeat(8), 'latin1'),
);

export type ArtifactConfig = UpgraderConfig['artifact'];

/** Small caps and short timers so every hostile case trips fast; cases override what they test. */
export const FAST_ARTIFACT: ArtifactConfig = {
  ...FLEX_PROFILE.artifact,
  maxArchiveBytes: 1024 * 1024,
  maxBinaryBytes: 256 * 1024,
  timeoutMs: 4000,
  idleTimeoutMs: 1500,
};

export const HEADER_TIMEOUT_MS = 500;

export function newCanary(): string {
  return `CANARY-${randomBytes(8).toString('hex')}`;
}

export interface Attempt {
  readonly url: string;
  readonly sha256?: string;
  readonly member?: string;
  /** Default: `<scratch>/out/agent`. May be relative or odd on purpose. */
  readonly output?: string;
  readonly artifact?: Partial<ArtifactConfig>;
  readonly agent?: Partial<UpgraderConfig['agent']>;
  /** Default: an AxiosArtifactSource trusting `caPem` with a 500 ms header timeout. */
  readonly source?: ArtifactSource;
  readonly caPem?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly headerTimeoutMs?: number;
  /** Extra secrets planted outside the URL's query (userinfo, Location, proxy credentials). */
  readonly secrets?: readonly string[];
  /** `cli` runs the real CLI (`fetch --json`) over in-memory streams; `cli-text` without `--json`. */
  readonly via?: 'api' | 'cli' | 'cli-text';
  /** The whole case must finish within this many ms (bounded waits, early aborts). */
  readonly withinMs?: number;
}

export interface Outcome {
  readonly code: ErrorCode | null;
  readonly message: string;
  readonly elapsedMs: number;
  readonly report: FetchReport | null;
  readonly logs: string;
  readonly cli: { readonly exitCode: number; readonly stdout: string; readonly stderr: string } | null;
}

export interface Harness {
  /** The scratch root (the sandbox root of the upgrader); fresh per test. */
  readonly root: string;
  /** `<root>/out/agent`: the default output file (its directory exists). */
  readonly output: string;
  /** This test's canary; `?sig=<canary>` goes into every URL. */
  readonly canary: string;
  /** `path?sig=<canary>` (or `&sig=` when the path already has a query). */
  withCanary(path: string): string;
  server(options?: HostileServerOptions): Promise<HostileServer>;
  blackHole(): Promise<BlackHole>;
  proxy(): Promise<ForwardProxy>;
  /** Runs the attempt and performs the three checks for a refusal with `code`. */
  refused(attempt: Attempt, code: ErrorCode): Promise<Outcome>;
  /** Positive control: the attempt succeeds, the output holds `expected`, no secret leaks. */
  fetched(attempt: Attempt, expected: Uint8Array): Promise<Outcome>;
}

export function useHarness(): Harness {
  let scratch: { root: string; cleanup(): void } | undefined;
  let canary = '';
  const closers: { close(): Promise<void> }[] = [];
  const servers: HostileServer[] = [];

  beforeEach(() => {
    scratch = makeScratch('agent-upgrade-hostile-');
    mkdirSync(join(scratch.root, 'out'));
    canary = newCanary();
  });
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c.close()));
    servers.length = 0;
    scratch?.cleanup();
    scratch = undefined;
  });

  const root = (): string => {
    if (scratch === undefined) throw new Error('harness used outside a test');
    return scratch.root;
  };

  const run = async (attempt: Attempt): Promise<Outcome> => {
    const logger = new RecordingLogger();
    const source =
      attempt.source ??
      new AxiosArtifactSource({
        ...(attempt.caPem === undefined ? {} : { caPem: attempt.caPem }),
        headerTimeoutMs: attempt.headerTimeoutMs ?? HEADER_TIMEOUT_MS,
        ...(attempt.env === undefined ? {} : { env: attempt.env }),
      });
    const artifact: ArtifactConfig = { ...FAST_ARTIFACT, ...attempt.artifact };
    const agent = { ...FLEX_PROFILE.agent, ...attempt.agent };
    const output = attempt.output ?? join(root(), 'out', 'agent');
    const started = performance.now();
    if (attempt.via === 'cli-text') {
      const configPath = join(root(), 'etc', 'hostile-config.json');
      const argv = ['fetch', '--config', configPath, '--root', root(), '--url', attempt.url, '--output', output];
      if (attempt.sha256 !== undefined) argv.push('--sha256', attempt.sha256);
      if (attempt.member !== undefined) argv.push('--member', attempt.member);
      const cli = await runCliInMemory(argv, { overrides: { artifactSource: source }, logger });
      const elapsedMs = performance.now() - started;
      const failed = /^agent-upgrade: (E_[A-Z_]+): (.*)$/m.exec(cli.stderr);
      return {
        code: cli.exitCode === 0 ? null : ((failed?.[1] as ErrorCode | undefined) ?? 'E_USAGE'),
        message: failed?.[2] ?? '',
        elapsedMs,
        report: null,
        logs: JSON.stringify(logger.lines),
        cli,
      };
    }
    if (attempt.via === 'cli') {
      const configPath = join(root(), 'etc', 'hostile-config.json');
      const argv = [
        'fetch',
        '--config',
        configPath,
        '--root',
        root(),
        '--json',
        '--url',
        attempt.url,
        '--output',
        output,
      ];
      if (attempt.sha256 !== undefined) argv.push('--sha256', attempt.sha256);
      if (attempt.member !== undefined) argv.push('--member', attempt.member);
      const cli = await runCliInMemory(argv, { overrides: { artifactSource: source }, logger });
      const elapsedMs = performance.now() - started;
      const lines = cli.stdout.split('\n').filter((l) => l !== '');
      expect(lines, `one JSON document on stdout, got: ${cli.stdout}`).toHaveLength(1);
      const doc = JSON.parse(lines[0] ?? '{}') as {
        ok: boolean;
        error?: { code: ErrorCode; message: string };
        fetch?: FetchReport;
      };
      return {
        code: doc.ok ? null : (doc.error?.code ?? null),
        message: doc.error?.message ?? '',
        elapsedMs,
        report: doc.fetch ?? null,
        logs: JSON.stringify(logger.lines),
        cli,
      };
    }
    const upgrader = sandboxUpgrader(root(), { artifact, agent }, { artifactSource: source }, logger);
    const result = await upgrader.fetch({ url: attempt.url, sha256: attempt.sha256, member: attempt.member, output });
    const elapsedMs = performance.now() - started;
    return {
      code: result.ok ? null : result.failure.code,
      message: result.ok ? '' : result.failure.message,
      elapsedMs,
      report: result.ok ? result.value : null,
      logs: JSON.stringify(logger.lines),
      cli: null,
    };
  };

  /** The CLI reads limits from a config file; written before the "before" snapshot. */
  const writeCliConfig = (attempt: Attempt): void => {
    if (attempt.via !== 'cli' && attempt.via !== 'cli-text') return;
    mkdirSync(join(root(), 'etc'), { recursive: true });
    const artifact: ArtifactConfig = { ...FAST_ARTIFACT, ...attempt.artifact };
    const config = {
      service: { manager: 'none' },
      artifact,
      ...(attempt.agent === undefined ? {} : { agent: attempt.agent }),
    };
    writeFileSync(join(root(), 'etc', 'hostile-config.json'), `${JSON.stringify(config)}\n`);
  };

  const checkSecrets = (attempt: Attempt, outcome: Outcome): void => {
    const secrets = [canary, ...(attempt.secrets ?? [])];
    expect(attempt.url.includes(canary) || (attempt.secrets ?? []).length > 0, 'every case plants a canary').toBe(true);
    for (const secret of secrets) {
      expect(outcome.message, 'failure message').not.toContain(secret);
      expect(outcome.logs, 'log lines').not.toContain(secret);
      if (outcome.report !== null) expect(JSON.stringify(outcome.report), 'fetch report').not.toContain(secret);
      if (outcome.cli !== null) {
        expect(outcome.cli.stdout, 'CLI stdout').not.toContain(secret);
        expect(outcome.cli.stderr, 'CLI stderr').not.toContain(secret);
      }
      expect(filesContaining(root(), secret), 'files under the scratch dir').toEqual([]);
    }
  };

  const checkServers = (): void => {
    for (const server of servers) {
      for (const request of server.requests)
        expect(request.headers['accept-encoding'], `accept-encoding on ${request.method}`).toBe('identity');
    }
  };

  return {
    get root() {
      return root();
    },
    get output() {
      return join(root(), 'out', 'agent');
    },
    get canary() {
      return canary;
    },
    withCanary: (path) => `${path}${path.includes('?') ? '&' : '?'}sig=${canary}`,
    async server(options = {}) {
      const s = await startHostileServer(options);
      closers.push(s);
      servers.push(s);
      return s;
    },
    async blackHole() {
      const b = await startBlackHole();
      closers.push(b);
      return b;
    },
    async proxy() {
      const p = await startForwardProxy();
      closers.push(p);
      return p;
    },
    async refused(attempt, code) {
      writeCliConfig(attempt);
      const output = attempt.output ?? join(root(), 'out', 'agent');
      const outputExisted = exists(output);
      const before = snapshotTree(root());
      const outcome = await run(attempt);
      // (1) the exact code
      expect({ code: outcome.code, message: outcome.message }).toMatchObject({ code });
      expect(outcome.message.length).toBeGreaterThan(0);
      if (outcome.cli !== null) expect(outcome.cli.exitCode).toBe(exitCodeFor(code));
      // (2) nothing written
      const after = snapshotTree(root());
      expect(after).toEqual(before);
      expect(Object.keys(after).filter((k) => k.includes('.tmp-'))).toEqual([]);
      if (!outputExisted && output.startsWith('/')) expect(exists(output)).toBe(false);
      // (3) no secret anywhere
      checkSecrets(attempt, outcome);
      checkServers();
      if (attempt.withinMs !== undefined) expect(outcome.elapsedMs).toBeLessThan(attempt.withinMs);
      return outcome;
    },
    async fetched(attempt, expected) {
      writeCliConfig(attempt);
      const outcome = await run(attempt);
      expect({ code: outcome.code, message: outcome.message }).toMatchObject({ code: null });
      if (outcome.cli !== null) expect(outcome.cli.exitCode).toBe(ExitCode.ok);
      const output = attempt.output ?? join(root(), 'out', 'agent');
      expect(new Uint8Array(readFileSync(output))).toEqual(expected);
      expect(Object.keys(snapshotTree(root())).filter((k) => k.includes('.tmp-'))).toEqual([]);
      checkSecrets(attempt, outcome);
      checkServers();
      if (attempt.withinMs !== undefined) expect(outcome.elapsedMs).toBeLessThan(attempt.withinMs);
      return outcome;
    },
  };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Relative paths of every entry under `root` whose name or (regular-file) content holds `secret`. */
export function filesContaining(root: string, secret: string): string[] {
  const hits: string[] = [];
  const needle = Buffer.from(secret, 'utf8');
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const rel = path.slice(root.length);
      if (name.includes(secret)) hits.push(rel);
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile() && readFileSync(path).includes(needle)) hits.push(rel);
    }
  };
  walk(root);
  return hits;
}

/** Polls `check` every 20 ms until it is true or `withinMs` passed; returns the last value. */
export async function eventually(check: () => boolean, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}
