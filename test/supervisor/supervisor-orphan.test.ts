import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { requestSupervisor } from '../../src/adapters/node/supervisor/control-client.js';
import { SupervisorServiceManager } from '../../src/adapters/node/supervisor/supervisor-service-manager.js';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { makeScratch } from '../support/real-tree.js';
import { assertBuildCurrent, CLI, FAST_SERVICE } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';
import { runningFrom } from '../support/processes.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SLOTS = '/usr/local/lib/aks-flex-node';
const SOCKET = '/run/aks-flex-node-supervisor.sock';
/** Every wait in this file: a supervisor starts and an agent stops within a few seconds. */
const WAIT_MS = 15_000;

/**
 * A supervisor process killed by SIGKILL under a running agent (the compiled test agent), then a
 * new `agent-upgrade supervise`: exactly one agent runs afterwards, never the old one beside it.
 */
describe('a supervisor killed by SIGKILL', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let services: SupervisorServiceManager;
  const supervisors: ChildProcess[] = [];
  const path = (hostPath: string) => join(scratch.root, hostPath);
  const blue = () => realpathSync(path(`${SLOTS}/aks-flex-node-blue`));

  /** `agent-upgrade supervise`, as an operator or a container runs it. */
  const superviseCli = () =>
    track(spawn(process.execPath, [CLI, 'supervise', '--root', scratch.root], { stdio: 'ignore' }));

  /** The same Supervisor without the parent-death signal: a host without setpriv, or the instant before it is set. */
  const superviseWithoutDeathSignal = () => {
    const module = pathToFileURL(join(REPO, 'dist/adapters/node/supervisor/supervisor.js')).href;
    const options = {
      execStart: path(`${SLOTS}/aks-flex-node-current`),
      args: ['agent'],
      controlSocket: path(SOCKET),
      restartDelayMs: 1000,
      startLimitBurst: 3,
      startLimitIntervalMs: 120_000,
      stopTimeoutMs: 5000,
      onFailure: null,
      parentDeathSignal: false,
    };
    const script = `import { Supervisor } from ${JSON.stringify(module)}; await new Supervisor(JSON.parse(process.argv[1])).start();`;
    return track(
      spawn(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(options)], { stdio: 'ignore' }),
    );
  };

  function track(child: ChildProcess): ChildProcess {
    supervisors.push(child);
    return child;
  }

  async function killed(child: ChildProcess): Promise<void> {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await Promise.race([exited, new Promise((done) => setTimeout(done, WAIT_MS))]);
  }

  /** The main PID the supervisor on the socket reports once it runs the blue slot. */
  async function supervisedAgent(): Promise<number | null> {
    let pid: number | null = null;
    await waitFor(async () => {
      const reply = await requestSupervisor(path(SOCKET), { op: 'status' }, 2000).catch(() => null);
      pid =
        reply?.ok === true && reply.mainPid !== null && runningFrom(blue()).includes(reply.mainPid)
          ? reply.mainPid
          : null;
      return pid !== null;
    }, WAIT_MS);
    return pid;
  }

  beforeAll(() => {
    assertBuildCurrent();
  });

  beforeEach(() => {
    scratch = makeScratch('agent-upgrade-orphan-');
    mkdirSync(path('/etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      path('/etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({
        agent: { args: ['agent'] },
        service: { manager: 'supervisor', ...FAST_SERVICE },
        container: { manager: 'none' },
        cluster: { manager: 'none' },
      }),
    );
    mkdirSync(path('/usr/local/bin'), { recursive: true });
    copyFileSync(buildTestAgent(path('agents'), { version: '1.0.0' }), path('/usr/local/bin/aks-flex-node'));
    const migrate = spawnSync(process.execPath, [CLI, 'migrate', '--root', scratch.root, '--json'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(migrate.status).toBe(0);
    services = new SupervisorServiceManager({ controlSocket: path(SOCKET), clock: new SystemClock() });
  }, 60_000);

  afterEach(async () => {
    for (const child of supervisors.splice(0))
      if (child.exitCode === null && child.signalCode === null) await killed(child);
    // Whatever still runs from this test's slots was started by it (an orphan the fix failed to stop).
    for (const pid of runningFrom(blue())) process.kill(pid, 'SIGKILL');
    expect(await waitFor(() => runningFrom(blue()).length === 0, WAIT_MS)).toBe(true);
    scratch.cleanup();
  }, 2 * WAIT_MS);

  it('takes the agent with it (parent-death signal); the next supervisor runs the only agent', async () => {
    const first = superviseCli();
    const old = await supervisedAgent();
    expect(old).not.toBeNull();
    await killed(first);
    expect(await waitFor(() => runningFrom(blue()).length === 0, WAIT_MS)).toBe(true);
    expect(await services.activity()).toBe('absent');

    superviseCli();
    const next = await supervisedAgent();
    expect(next).not.toBeNull();
    expect(next).not.toBe(old);
    expect(runningFrom(blue())).toEqual([next]);
  });

  it('leaves an orphan without the death signal: reported, not absent; the next supervisor stops it and runs the only agent', async () => {
    const first = superviseWithoutDeathSignal();
    const orphan = await supervisedAgent();
    expect(orphan).not.toBeNull();
    await killed(first);
    expect(runningFrom(blue())).toEqual([orphan]);
    expect(await services.activity()).toBe('unknown');
    expect(await services.mainExecutable()).toBe(blue());

    superviseCli();
    const next = await supervisedAgent();
    expect(next).not.toBeNull();
    expect(next).not.toBe(orphan);
    expect(await waitFor(() => !runningFrom(blue()).includes(orphan ?? 0), WAIT_MS)).toBe(true);
    expect(runningFrom(blue())).toEqual([next]);
    expect(await services.activity()).toBe('active');
  });
});
