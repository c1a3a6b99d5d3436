import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { requestSupervisor } from '../../src/adapters/node/supervisor/control-client.js';
import { SupervisorServiceManager } from '../../src/adapters/node/supervisor/supervisor-service-manager.js';
import { loadConfig } from '../../src/app/node/config/load-config.js';
import { buildTestAgent, type TestAgentBuild } from './agent/build-agent.js';
import { makeScratch } from './real-tree.js';
import { assertBuildCurrent, CLI, FAST_HEALTH, FAST_SERVICE } from './systemd/systemd-host.js';
import { waitFor } from './wait-for.js';

const SLOTS = '/usr/local/lib/aks-flex-node';

/**
 * A `--root` sandbox whose agent — the compiled test agent, v1.0.0, migrated into blue — runs
 * under a real `agent-upgrade supervise` process; every other command reaches it over its
 * control socket, as on a host without systemd.
 */
export interface SupervisedSandbox {
  readonly root: string;
  readonly services: SupervisorServiceManager;
  path(hostPath: string): string;
  /** A build of the test agent; every build embeds the upgrader, so the hook's `<last-good> recover` works. */
  agent(build: TestAgentBuild): string;
  slot(name: 'blue' | 'green'): string;
  /** The slot a link names (`blue`, `green`). */
  link(name: 'current' | 'last-good'): string;
  /** The built CLI on this sandbox, with `--json`. */
  cli(...args: string[]): {
    readonly status: number | null;
    readonly doc: { readonly error?: { readonly code: string } };
  };
  /** Waits (bounded) until the supervised agent runs that slot. */
  running(name: 'blue' | 'green'): Promise<boolean>;
  /**
   * Waits (bounded) until the supervisor's on-failure hook has ended. The hook (`recover`) takes
   * the host lock, so after a start limit was hit a host is quiet only once it is done.
   */
  hookIdle(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * `changes` replaces sections of the sandbox's configuration (`agent`, `health`, …) given the
 * sandbox root, e.g. to pass the agent a path under it; everything else stays as below.
 */
export async function startSupervisedSandbox(
  prefix: string,
  changes: (root: string) => Record<string, unknown> = () => ({}),
): Promise<SupervisedSandbox> {
  assertBuildCurrent();
  const scratch = makeScratch(prefix);
  const path = (hostPath: string) => join(scratch.root, hostPath);
  const slot = (name: 'blue' | 'green') => realpathSync(path(`${SLOTS}/aks-flex-node-${name}`));
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [CLI, ...args, '--root', scratch.root, '--json'], {
      encoding: 'utf8',
      timeout: 90_000,
    });
    return { status: run.status, doc: JSON.parse(run.stdout || '{}') as { error?: { code: string } } };
  };
  const agent = (build: TestAgentBuild) =>
    buildTestAgent(join(scratch.root, 'agents'), { ...build, embedsUpgrader: true });
  writeSandboxConfig(path('/etc/aks-flex-node/agent-upgrade.json'), changes(scratch.root));
  mkdirSync(path('/usr/local/bin'), { recursive: true });
  copyFileSync(agent({ version: '1.0.0' }), path('/usr/local/bin/aks-flex-node'));
  if (cli('migrate').status !== 0) throw new Error('the sandbox did not migrate');
  const config = await loadConfig(new NodeFileSystem(), { root: scratch.root });
  if (!config.ok) throw new Error(config.failure.message);
  const services = new SupervisorServiceManager({
    controlSocket: path(config.value.service.supervisorSocket),
    clock: new SystemClock(),
  });
  const supervisor: ChildProcess = spawn(process.execPath, [CLI, 'supervise', '--root', scratch.root], {
    stdio: 'ignore',
  });
  const running = (name: 'blue' | 'green') =>
    waitFor(async () => (await services.mainExecutable()) === slot(name), 30_000);
  const socket = path(config.value.service.supervisorSocket);
  const hookIdle = () =>
    waitFor(async () => {
      const reply = await requestSupervisor(socket, { op: 'status' }, 2_000).catch(() => null);
      return reply?.ok === true && reply.failureHook === 'idle';
    }, 60_000);
  const close = async () => {
    if (supervisor.exitCode === null) {
      const exited = new Promise((done) => supervisor.once('exit', done));
      supervisor.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    }
    scratch.cleanup();
  };
  if (!(await running('blue'))) {
    await close();
    throw new Error('the supervised agent did not start');
  }
  return {
    root: scratch.root,
    services,
    path,
    agent,
    slot,
    link: (name) => readlinkSync(path(`${SLOTS}/aks-flex-node-${name}`)).replace(/^.*aks-flex-node-/, ''),
    cli,
    running,
    hookIdle,
    close,
  };
}

/** The sandbox's configuration file: the supervisor, test timings, no container or cluster. */
function writeSandboxConfig(file: string, changes: Record<string, unknown>): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      agent: { args: ['agent'] },
      service: { manager: 'supervisor', ...FAST_SERVICE },
      health: FAST_HEALTH,
      container: { manager: 'none' },
      cluster: { manager: 'none' },
      ...changes,
    }),
  );
}
