import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { requestSupervisor } from '../../src/adapters/node/supervisor/control-client.js';
import { loadConfig } from '../../src/app/node/config/load-config.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import type { TestAgentBuild } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { startSupervisedSandbox, type SupervisedSandbox } from '../support/supervised-sandbox.js';
import { TEST_IDENTITY } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The scenarios of the real-systemd suite that apply to hosts without systemd, with the built-in
 * supervisor (`agent-upgrade supervise`, a real process) running the compiled test agent and every
 * other command reaching it over its control socket.
 */
describe('the built-in supervisor runs the same scenarios', () => {
  let sandbox: SupervisedSandbox;
  let releases: HostileServer;
  const store = new MemoryOperationStore({ clock: new SystemClock() });
  const root = () => sandbox.root;
  const agent = (build: TestAgentBuild) => sandbox.agent(build);
  const path = (hostPath: string) => sandbox.path(hostPath);
  const slot = (name: 'blue' | 'green') => sandbox.slot(name);
  const link = (name: 'current' | 'last-good') => sandbox.link(name);
  const cli = (...args: string[]) => sandbox.cli(...args);
  const running = (name: 'blue' | 'green') => sandbox.running(name);

  beforeAll(async () => {
    releases = await startHostileServer();
    sandbox = await startSupervisedSandbox('agent-upgrade-supervisor-');
    services = sandbox.services;
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await releases?.close();
  });

  let services: SupervisedSandbox['services'];

  it('direct activate: the supervisor runs the candidate', async () => {
    expect(cli('activate', agent({ version: '2.0.0' })).status).toBe(0);
    expect({ current: link('current'), lastGood: link('last-good') }).toEqual({ current: 'green', lastGood: 'blue' });
    expect(await running('green')).toBe(true);
  });

  it('direct activate of a candidate that crashes on start: rolled back, exit 3', async () => {
    const result = cli('activate', agent({ version: '3.0.0', behaviour: 'crash-on-start' }));
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 3, code: 'E_UNHEALTHY' });
    expect(link('current')).toBe('green');
    expect(await running('green')).toBe(true);
    // The start limit the candidate hit ran the on-failure hook, whose `recover` takes the host
    // lock once the activation let it go: the next case starts on a quiet host, not a busy lock.
    expect(await sandbox.hookIdle()).toBe(true);
  });

  async function daemon(selfExecutable: string | null) {
    const config = await loadConfig(new NodeFileSystem(), { root: root() });
    if (!config.ok) throw new Error(config.failure.message);
    const upgrader = createUpgrader({
      config: config.value,
      identity: { ...TEST_IDENTITY, pid: process.pid },
      logger: new RecordingLogger(),
    });
    if (!upgrader.ok) throw new Error(upgrader.failure.message);
    const session = upgrader.value.managed({ store, selfExecutable });
    if (!session.ok) throw new Error(session.failure.message);
    return session.value;
  }

  /** A daemon's startup gate, retried (bounded) while the hook's `recover` holds the host lock. */
  async function startWhenFree(session: Awaited<ReturnType<typeof daemon>>) {
    let started = await session.start();
    for (let attempt = 0; attempt < 40 && started.ok && started.value.kind === 'busy'; attempt += 1) {
      await new Promise((done) => setTimeout(done, 250));
      started = await session.start();
    }
    return started;
  }

  function publish(build: TestAgentBuild): Record<string, string> {
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, readFileSync(agent(build)));
    const route = `/agent-${build.version}.tar.gz`;
    releases.route(route, serve(archive));
    return { downloadURL: releases.url(route), sha256: sha256(archive) };
  }

  it('managed, self-hosted: hand-over through a delayed supervisor restart; the candidate publishes Complete', async () => {
    const parameters = publish({ version: '4.0.0' });
    const operation = store.create({ name: 'sup-ok', parameters });
    const old = await daemon(await services.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters })).toEqual({
      ok: true,
      value: { kind: 'handed-over' },
    });
    expect(await running('blue')).toBe(true);

    const restarted = await daemon(await services.mainExecutable());
    expect(await restarted.start()).toEqual({ ok: true, value: { kind: 'open' } });
    expect(store.get('sup-ok')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(store.terminalWrites('sup-ok')).toBe(1);
    expect({
      current: link('current'),
      record: existsSync(path('/etc/aks-flex-node/agent-upgrade-signal.json')),
    }).toEqual({ current: 'blue', record: false });
  });

  it('managed, self-hosted: a crash-looping candidate hits the start limit; the hook recovers through last-good, which publishes Failed once', async () => {
    const parameters = publish({ version: '5.0.0', behaviour: 'crash-on-start' });
    const operation = store.create({ name: 'sup-crash', parameters });
    const old = await daemon(await services.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters })).toEqual({
      ok: true,
      value: { kind: 'handed-over' },
    });
    const record = path('/etc/aks-flex-node/agent-upgrade-signal.json');
    expect(
      await waitFor(
        async () =>
          existsSync(record) &&
          JSON.parse(readFileSync(record, 'utf8')).failure != null &&
          (await services.mainExecutable()) === slot('blue'),
        40_000,
      ),
    ).toBe(true);

    // The hook's `recover` still holds the host lock while it waits for last-good to be healthy;
    // a daemon retries a busy gate, and so does this one (bounded).
    const lastGood = await daemon(await services.mainExecutable());
    expect(await startWhenFree(lastGood)).toEqual({ ok: true, value: { kind: 'open' } });
    expect(store.get('sup-crash')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(store.terminalWrites('sup-crash')).toBe(1);
    expect({ current: link('current'), record: existsSync(record) }).toEqual({ current: 'blue', record: false });
    expect(await services.activity()).toBe('active');
    expect(await sandbox.hookIdle()).toBe(true);
  });

  it('managed, self-hosted, watch window: a candidate that passes the gate and crashes 4 s in is rolled back and quarantined, Failed once', async () => {
    const configFile = path('/etc/aks-flex-node/agent-upgrade.json');
    const original = readFileSync(configFile, 'utf8');
    const config = JSON.parse(original) as { health: Record<string, unknown> };
    writeFileSync(configFile, JSON.stringify({ ...config, health: { ...config.health, watchMs: 8_000 } }));
    try {
      const build = agent({ version: '5.5.0', behaviour: { crashAfterSeconds: 4 } });
      const parameters = publish({ version: '5.5.0', behaviour: { crashAfterSeconds: 4 } });
      const operation = store.create({ name: 'sup-window', parameters });
      const old = await daemon(await services.mainExecutable());
      expect(await old.handle({ operation, phase: null, parameters })).toEqual({
        ok: true,
        value: { kind: 'handed-over' },
      });
      expect(await running('green')).toBe(true);

      // The candidate's daemon watches its own window; the agent's crash fails it, and as the
      // agent itself it schedules the restart into last-good, whose daemon publishes Failed.
      const candidate = await daemon(await services.mainExecutable());
      expect(await startWhenFree(candidate)).toEqual({
        ok: true,
        value: { kind: 'closed', reason: 'restart-scheduled' },
      });
      expect(await running('blue')).toBe(true);
      expect(await startWhenFree(await daemon(await services.mainExecutable()))).toEqual({
        ok: true,
        value: { kind: 'open' },
      });
      expect(store.get('sup-window')).toMatchObject({ phase: 'Failed' });
      expect(store.terminalWrites('sup-window')).toBe(1);
      const state = JSON.parse(readFileSync(path('/etc/aks-flex-node/agent-upgrade-state.json'), 'utf8')) as {
        quarantine: string[];
      };
      expect(state.quarantine).toContain(sha256(readFileSync(build)));
      expect(link('current')).toBe('blue');
      expect(await running('blue')).toBe(true);
      expect(await sandbox.hookIdle()).toBe(true);
    } finally {
      writeFileSync(configFile, original);
    }
  });

  it('a stopped agent stays stopped through an activation', async () => {
    expect(await services.mainExecutable()).not.toBe(null);
    await requestSupervisor(path('/run/aks-flex-node-supervisor.sock'), { op: 'stop' }, 10_000);
    expect(cli('activate', agent({ version: '6.0.0' })).status).toBe(0);
    expect(await services.activity()).toBe('inactive');
  });
});
