import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { hostArchitecture } from '../../src/adapters/node/host/host-architecture.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { memberNameFor } from '../../src/domain/node/artifact/archive-rules.js';
import { type ErrorCode, exitCodeFor, ExitCode } from '../../src/domain/common/error-codes.js';
import type { Failure } from '../../src/domain/common/failure.js';
import { startBlackHole, type BlackHole } from '../support/http/black-hole.js';
import { type ForwardProxy, startForwardProxy } from '../support/http/forward-proxy.js';
import { type HostileServer, type HostileServerOptions, startHostileServer } from '../support/http/hostile-server.js';
import { makeScratch, snapshotTree } from '../support/real-tree.js';
import { type Attempt, type Outcome, outputOf, runAttempt, writeCliConfig } from './harness-run.js';

export { type ArtifactConfig, type Attempt, FAST_ARTIFACT, HEADER_TIMEOUT_MS, type Outcome } from './harness-run.js';

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

export function newCanary(): string {
  return `CANARY-${randomBytes(8).toString('hex')}`;
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

/** What one test's checks look at: its scratch root, its canary and the servers it started. */
interface Scene {
  readonly root: string;
  readonly canary: string;
  readonly servers: readonly HostileServer[];
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
  const scene = (): Scene => ({ root: root(), canary, servers });
  const closed = <T extends { close(): Promise<void> }>(closer: T): T => {
    closers.push(closer);
    return closer;
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
      const s = closed(await startHostileServer(options));
      servers.push(s);
      return s;
    },
    blackHole: async () => closed(await startBlackHole()),
    proxy: async () => closed(await startForwardProxy()),
    refused: (attempt, code) => refusedIn(scene(), attempt, code),
    fetched: (attempt, expected) => fetchedIn(scene(), attempt, expected),
  };
}

async function refusedIn(scene: Scene, attempt: Attempt, code: ErrorCode): Promise<Outcome> {
  const { root } = scene;
  writeCliConfig(root, attempt);
  const output = outputOf(root, attempt);
  const outputExisted = exists(output);
  const before = snapshotTree(root);
  const outcome = await runAttempt(root, attempt);
  // (1) the exact code
  expect({ code: outcome.code, message: outcome.message }).toMatchObject({ code });
  expect(outcome.message.length).toBeGreaterThan(0);
  if (outcome.cli !== null) expect(outcome.cli.exitCode).toBe(exitCodeFor(code));
  // (2) nothing written
  const after = snapshotTree(root);
  expect(after).toEqual(before);
  expect(Object.keys(after).filter((k) => k.includes('.tmp-'))).toEqual([]);
  if (!outputExisted && output.startsWith('/')) expect(exists(output)).toBe(false);
  // (3) no secret anywhere
  checkSecrets(scene, attempt, outcome);
  checkServers(scene);
  if (attempt.withinMs !== undefined) expect(outcome.elapsedMs).toBeLessThan(attempt.withinMs);
  return outcome;
}

async function fetchedIn(scene: Scene, attempt: Attempt, expected: Uint8Array): Promise<Outcome> {
  const { root } = scene;
  writeCliConfig(root, attempt);
  const outcome = await runAttempt(root, attempt);
  expect({ code: outcome.code, message: outcome.message }).toMatchObject({ code: null });
  if (outcome.cli !== null) expect(outcome.cli.exitCode).toBe(ExitCode.ok);
  expect(new Uint8Array(readFileSync(outputOf(root, attempt)))).toEqual(expected);
  expect(Object.keys(snapshotTree(root)).filter((k) => k.includes('.tmp-'))).toEqual([]);
  checkSecrets(scene, attempt, outcome);
  checkServers(scene);
  if (attempt.withinMs !== undefined) expect(outcome.elapsedMs).toBeLessThan(attempt.withinMs);
  return outcome;
}

function checkSecrets({ root, canary }: Scene, attempt: Attempt, outcome: Outcome): void {
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
    expect(filesContaining(root, secret), 'files under the scratch dir').toEqual([]);
  }
}

function checkServers({ servers }: Scene): void {
  for (const server of servers) {
    for (const request of server.requests)
      expect(request.headers['accept-encoding'], `accept-encoding on ${request.method}`).toBe('identity');
  }
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
