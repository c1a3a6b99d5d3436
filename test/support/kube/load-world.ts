import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestAgent, withVersion } from '../agent/build-agent.js';
import { releaseArchive } from '../archive/index.js';
import { type HostileServer, serve, startHostileServer } from '../http/hostile-server.js';
import { makeScratch } from '../real-tree.js';
import { CLI, TEST_IDENTITY } from '../systemd/systemd-host.js';
import { type FakeApiServer, startFakeApiServer } from './fake-apiserver.js';
import { machineOperation, writeKubeconfig } from './machine-operations.js';
import { waitFor } from '../wait-for.js';

const MACHINE = 'node-1';
const BASE_VERSION = '2.1.100';

export interface LoadResult {
  readonly upgrades: number;
  readonly completed: number;
  /** Operations of ours with other than exactly one terminal status write. */
  readonly notExactlyOnce: readonly string[];
  /** Other machines' operations that got any status write. */
  readonly othersTouched: number;
  /** API requests (watch streams excluded) per upgrade, by method. */
  readonly requestsPerUpgrade: Readonly<Record<string, number>>;
  readonly watchRequests: number;
  /** The daemon's resident set, KiB: right after it opened its watch, at the end, and its peak. */
  readonly rssKiB: { readonly idle: number; readonly end: number; readonly peak: number };
  readonly elapsedMs: number;
  /** How the daemon ended after SIGTERM: exit code (null: killed) and how long it took. */
  readonly shutdown: { readonly code: number | null; readonly afterMs: number };
}

/**
 * The daemon (`agent-upgrade daemon`, a real process) as a sidecar of the compiled test agent run
 * by `agent-upgrade supervise`, against the fake API server holding `others` operations for
 * other machines; `ours` upgrades are then requested one after another.
 */
export async function runDaemonLoad(options: {
  readonly others: number;
  readonly ours: number;
  readonly selectableFields: boolean;
}): Promise<LoadResult> {
  const scratch = makeScratch('agent-upgrade-load-');
  const api = await startFakeApiServer({ selectableFields: options.selectableFields, bookmarkIntervalMs: 5_000 });
  const releases = await startHostileServer();
  const children: ChildProcess[] = [];
  try {
    const { root, built } = prepareHost(scratch.root, api.origin);
    for (let index = 0; index < options.others; index += 1) {
      api.create(
        machineOperation(`other-${index}`, `node-${1000 + index}`, {
          parameters: { downloadURL: 'http://127.0.0.1:9/never.tar.gz' },
        }),
      );
    }
    const daemon = await startDaemon(root, api, children);
    const pid = daemon.child.pid ?? 0;
    const idle = memoryKiB(pid).rss;
    const before = api.requests.length;
    const startedMs = Date.now();
    const completed = await requestUpgrades(api, releases, built, options.ours, daemon.stderr);
    const elapsedMs = Date.now() - startedMs;
    // Idle again: what the daemon keeps between upgrades, once a quiet moment let V8 shrink.
    await new Promise((done) => setTimeout(done, 3_000));
    const memory = memoryKiB(pid);
    const requests = countRequests(api.requests.slice(before), options.ours);
    const shutdown = await terminate(daemon.child, 15_000);
    return {
      upgrades: options.ours,
      completed,
      ...statusWritesOf(api, options),
      ...requests,
      rssKiB: { idle, end: memory.rss, peak: memory.peak },
      elapsedMs,
      shutdown,
    };
  } finally {
    await stopChildren(children);
    await releases.close();
    await api.close();
    scratch.cleanup();
  }
}

/** A host under `scratchRoot`/host: its configuration, the test agent as the installed binary, migrated. */
function prepareHost(scratchRoot: string, apiOrigin: string): { root: string; built: Buffer } {
  const root = join(scratchRoot, 'host');
  const path = (hostPath: string) => join(root, hostPath);
  mkdirSync(path('/etc/aks-flex-node'), { recursive: true });
  writeFileSync(
    path('/etc/aks-flex-node/agent-upgrade.json'),
    JSON.stringify({
      agent: { mode: 'sidecar', args: ['agent'] },
      service: { manager: 'supervisor', restartSec: 0, startLimitBurst: 100, startLimitIntervalSec: 1 },
      health: { timeoutMs: 10_000, stableMs: 200, pollMs: 50, watchMs: 0 },
      container: { manager: 'none' },
      cluster: { manager: 'kubernetes', kubeconfig: writeKubeconfig(scratchRoot, apiOrigin), machineName: MACHINE },
    }),
  );
  const built = readFileSync(buildTestAgent(join(scratchRoot, 'agents'), { version: BASE_VERSION }));
  mkdirSync(path('/usr/local/bin'), { recursive: true });
  writeFileSync(path('/usr/local/bin/aks-flex-node'), built, { mode: 0o755 });
  const migrated = spawnSync(process.execPath, [CLI, 'migrate', '--root', root], { encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
  return { root, built };
}

/** Starts `supervise` and `daemon` (added to `children`) and waits for the daemon's watch. */
async function startDaemon(
  root: string,
  api: FakeApiServer,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; stderr: () => string }> {
  // Run as installed (through the bin's shebang and its V8 flags), not as `node <script>`.
  children.push(spawn(CLI, ['supervise', '--root', root], { stdio: 'ignore' }));
  const daemon = spawn(CLI, ['daemon', '--root', root, '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(daemon);
  let stderr = '';
  daemon.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
  if (!(await waitFor(() => api.openWatches().length > 0, 30_000)))
    throw new Error(`the daemon did not start watching: ${stderr}`);
  return { child: daemon, stderr: () => stderr };
}

/** Requests `ours` upgrades one after another, each to the next version; how many completed. */
async function requestUpgrades(
  api: FakeApiServer,
  releases: HostileServer,
  built: Buffer,
  ours: number,
  stderr: () => string,
): Promise<number> {
  let completed = 0;
  for (let index = 0; index < ours; index += 1) {
    const version = `2.1.${101 + index}`;
    const archive = releaseArchive(
      `aks-flex-node-linux-${TEST_IDENTITY.arch}`,
      withVersion(built, BASE_VERSION, version),
    );
    releases.route(`/agent-${version}.tar.gz`, serve(archive));
    const name = `upgrade-${index}`;
    api.create(
      machineOperation(name, MACHINE, {
        parameters: {
          downloadURL: releases.url(`/agent-${version}.tar.gz`),
          sha256: createHash('sha256').update(archive).digest('hex'),
        },
      }),
    );
    // Interleaved traffic for other machines while ours runs.
    api.create(machineOperation(`other-late-${index}`, `node-${5000 + index}`));
    const phase = () => (api.get(name)?.status as { phase?: string } | undefined)?.phase;
    if (!(await waitFor(() => phase() === 'Complete' || phase() === 'Failed', 30_000)))
      throw new Error(`${name} did not finish: ${stderr()}`);
    if (phase() === 'Complete') completed += 1;
  }
  return completed;
}

/** The requests made during the upgrades: watch requests, and the others per upgrade by method. */
function countRequests(
  during: FakeApiServer['requests'],
  ours: number,
): Pick<LoadResult, 'requestsPerUpgrade' | 'watchRequests'> {
  const byMethod: Record<string, number> = {};
  let watchRequests = 0;
  for (const request of during) {
    if (request.query['watch'] === 'true' || request.query['watch'] === '1') watchRequests += 1;
    else byMethod[request.method] = (byMethod[request.method] ?? 0) + 1;
  }
  return {
    requestsPerUpgrade: Object.fromEntries(Object.entries(byMethod).map(([method, count]) => [method, count / ours])),
    watchRequests,
  };
}

/** Our operations without exactly one terminal status write, and how many of the others were written. */
function statusWritesOf(
  api: FakeApiServer,
  options: { readonly others: number; readonly ours: number },
): Pick<LoadResult, 'notExactlyOnce' | 'othersTouched'> {
  const ours = Array.from({ length: options.ours }, (_, index) => `upgrade-${index}`);
  const terminalWrites = (name: string) =>
    api.statusWrites(name).filter((status) => ['Complete', 'Failed'].includes(String(status['phase']))).length;
  const others = [
    ...Array.from({ length: options.others }, (_, index) => `other-${index}`),
    ...Array.from({ length: options.ours }, (_, index) => `other-late-${index}`),
  ];
  return {
    notExactlyOnce: ours.filter((name) => terminalWrites(name) !== 1),
    othersTouched: others.filter((name) => api.statusWrites(name).length > 0 || api.get(name)?.status !== undefined)
      .length,
  };
}

/** SIGTERM to every child, then up to 10 s for each to exit. */
async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map((child) =>
      child.exitCode !== null
        ? Promise.resolve()
        : new Promise((done) => {
            child.once('exit', done);
            setTimeout(done, 10_000).unref();
          }),
    ),
  );
}

/** SIGTERM, then the exit code and the time it took; SIGKILL (code null) after `timeoutMs`. */
async function terminate(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; afterMs: number }> {
  const startedMs = Date.now();
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return { code, afterMs: Date.now() - startedMs };
}

function memoryKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}
