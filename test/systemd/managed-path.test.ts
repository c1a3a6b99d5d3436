import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import type { ManagedSession } from '../../src/app/node/managed/managed-session.js';
import { buildTestAgent, type TestAgentBuild } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';

const MEMBER = `aks-flex-node-linux-${TEST_IDENTITY.arch}`;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The managed path on a real systemd. The daemon runs in this process over the real host
 * adapters (files, flock, HTTP download, the systemd adapter through nsenter) with an in-memory
 * operation store that outlives "processes"; systemd really restarts the agent, runs the
 * OnFailure unit and the recovery script, which runs `recover` through the last-good binary.
 */
describe('managed path on a real systemd', () => {
  let world: SystemdWorld;
  let releases: HostileServer;
  const store = new MemoryOperationStore({ clock: new SystemClock() });
  const agent = (build: TestAgentBuild) => buildTestAgent(world.agentsDir(), build);

  beforeAll(async () => {
    world = await SystemdWorld.create();
    releases = await startHostileServer();
  }, 60_000);
  afterAll(async () => {
    await releases?.close();
    await world?.close();
  });

  const runningHost = (mode: 'self-hosted' | 'sidecar', service: Record<string, unknown> = {}) =>
    world.runningHost({ agent: { mode }, service });

  function publish(build: TestAgentBuild): { readonly parameters: Record<string, string>; readonly digest: string } {
    const binary = readFileSync(agent(build));
    const archive = releaseArchive(MEMBER, binary);
    const path = `/releases/${build.version}-${sha256(binary).slice(0, 8)}.tar.gz`;
    releases.route(path, serve(archive));
    return {
      parameters: { downloadURL: `${releases.url(path)}?sig=secret-token`, sha256: sha256(archive) },
      digest: sha256(binary),
    };
  }

  /** A daemon process: a fresh Upgrader and session over the surviving host and cluster. */
  async function daemon(host: SandboxHost, selfExecutable: string | null): Promise<ManagedSession> {
    const { config } = await host.configuration();
    const upgrader = createUpgrader({
      config,
      identity: TEST_IDENTITY,
      logger: new RecordingLogger(),
      overrides: { serviceManager: await host.serviceManager() },
    });
    if (!upgrader.ok) throw new Error(upgrader.failure.message);
    const session = upgrader.value.managed({ store, selfExecutable });
    if (!session.ok) throw new Error(session.failure.message);
    return session.value;
  }

  const containerDigest = (host: SandboxHost) =>
    sha256(readFileSync(host.path('/var/lib/machines/kube1/usr/local/bin/aks-flex-node')));

  it('self-hosted: the old daemon hands over, systemd restarts into the candidate, which publishes Complete', async () => {
    const host = await runningHost('self-hosted');
    const release = publish({ version: '2.0.0' });
    const operation = store.create({ name: 'upgrade-ok', parameters: release.parameters });

    const old = await daemon(host, host.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters: release.parameters })).toEqual({
      ok: true,
      value: { kind: 'handed-over' },
    });
    expect(store.get('upgrade-ok')?.phase).toBe('InProgress');
    // The transient unit restarts the agent a moment later; the new main process is the candidate.
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);

    const restarted = await daemon(host, host.mainExecutable());
    expect(await restarted.start()).toEqual({ ok: true, value: { kind: 'open' } });

    expect(store.get('upgrade-ok')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(store.terminalWrites('upgrade-ok')).toBe(1);
    expect({ current: host.link('current'), lastGood: host.link('last-good'), record: host.recordExists() }).toEqual({
      current: 'green',
      lastGood: 'blue',
      record: false,
    });
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(containerDigest(host)).toBe(release.digest);
    expect(JSON.stringify(store.history('upgrade-ok'))).not.toContain('secret-token');
  });

  it('self-hosted: a crash-looping candidate is caught by OnFailure; recovery restores last-good, which publishes Failed once', async () => {
    const host = await runningHost('self-hosted');
    const previousDigest = sha256(readFileSync(host.slotPath('blue')));
    const release = publish({ version: '2.0.0', behaviour: 'crash-on-start' });
    const operation = store.create({ name: 'upgrade-crash', parameters: release.parameters });

    const old = await daemon(host, host.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters: release.parameters })).toEqual({
      ok: true,
      value: { kind: 'handed-over' },
    });
    // systemd restarts the candidate until the start limit, then runs the recovery unit, whose
    // script runs `<last-good> recover`: the record gets the failure and current goes back.
    expect(
      await host.systemd.waitFor(
        () => host.recordExists() && host.record().failure != null && host.mainExecutable() === host.slotPath('blue'),
        40_000,
      ),
    ).toBe(true);
    expect(host.link('current')).toBe('blue');
    // The script goes on after `recover` (reset-failed, restart): wait for it to exit.
    expect(await host.systemd.waitFor(() => host.recoveryRan(), 20_000)).toBe(true);
    expect(host.systemd.property(host.recoveryUnit, 'Result')).toBe('success');

    const lastGood = await daemon(host, host.mainExecutable());
    expect(await lastGood.start()).toEqual({ ok: true, value: { kind: 'open' } });

    expect(store.get('upgrade-crash')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(store.terminalWrites('upgrade-crash')).toBe(1);
    expect(store.violations).toEqual([]);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'blue', record: false });
    expect(host.state().quarantine).toContain(release.digest);
    expect(containerDigest(host)).toBe(previousDigest);
    expect(host.activeState()).toBe('active');
    expect(host.mainExecutable()).toBe(host.slotPath('blue'));
  });

  it('the recovery unit run twice while systemd is still auto-restarting the candidate: once is enough, twice changes nothing more', async () => {
    // A start limit systemd will not reach during the test: the candidate keeps being restarted.
    const host = await runningHost('self-hosted', { startLimitBurst: 100 });
    const release = publish({ version: '2.3.0', behaviour: { crashAfterSeconds: 1 } });
    const operation = store.create({ name: 'upgrade-auto-restart', parameters: release.parameters });
    const old = await daemon(host, host.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters: release.parameters })).toEqual({
      ok: true,
      value: { kind: 'handed-over' },
    });
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(await host.systemd.waitFor(() => Number(host.systemd.property(host.unit, 'NRestarts')) >= 1, 20_000)).toBe(
      true,
    );

    expect(host.systemctl('start', host.recoveryUnit).status).toBe(0);
    const afterFirst = { current: host.link('current'), failure: (host.record().failure as { code: string }).code };
    expect(host.systemctl('start', host.recoveryUnit).status).toBe(0);
    expect({ current: host.link('current'), failure: (host.record().failure as { code: string }).code }).toEqual(
      afterFirst,
    );
    expect(afterFirst.current).toBe('blue');
    expect(await host.waitRunning(host.slotPath('blue'))).toBe(true);

    const lastGood = await daemon(host, host.mainExecutable());
    expect(await lastGood.start()).toEqual({ ok: true, value: { kind: 'open' } });
    expect(store.get('upgrade-auto-restart')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(store.terminalWrites('upgrade-auto-restart')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists(), running: host.mainExecutable() }).toEqual({
      current: 'blue',
      record: false,
      running: host.slotPath('blue'),
    });
  });

  it('sidecar: the daemon restarts the agent into the candidate itself and publishes Complete', async () => {
    const host = await runningHost('sidecar');
    const release = publish({ version: '2.1.0' });
    const operation = store.create({ name: 'upgrade-sidecar', parameters: release.parameters });

    const sidecar = await daemon(host, null);
    expect(await sidecar.handle({ operation, phase: null, parameters: release.parameters })).toEqual({
      ok: true,
      value: { kind: 'gate' },
    });
    expect(await sidecar.start()).toEqual({ ok: true, value: { kind: 'open' } });

    expect(store.get('upgrade-sidecar')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(store.terminalWrites('upgrade-sidecar')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(containerDigest(host)).toBe(release.digest);
  });

  it('sidecar: an agent that crashes after starting is rolled back and Failed is published once', async () => {
    const host = await runningHost('sidecar');
    const release = publish({ version: '2.2.0', behaviour: { crashAfterSeconds: 1 } });
    const operation = store.create({ name: 'upgrade-sidecar-crash', parameters: release.parameters });

    const sidecar = await daemon(host, null);
    expect((await sidecar.handle({ operation, phase: null, parameters: release.parameters })).ok).toBe(true);
    let outcome = await sidecar.start();
    // The recovery unit may hold the lock for a moment when the candidate hits the start limit.
    for (let attempt = 0; attempt < 20 && outcome.ok && outcome.value.kind === 'busy'; attempt += 1) {
      await new Promise((done) => setTimeout(done, 500));
      outcome = await sidecar.start();
    }
    expect(outcome).toEqual({ ok: true, value: { kind: 'open' } });

    expect(store.get('upgrade-sidecar-crash')).toMatchObject({ phase: 'Failed' });
    expect(store.terminalWrites('upgrade-sidecar-crash')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'blue', record: false });
    expect(await host.waitRunning(host.slotPath('blue'))).toBe(true);
  });

  /** A sidecar host whose upgrades stay on trial for `watchMs` after the gate. */
  const watchedHost = (watchMs: number) => world.runningHost({ agent: { mode: 'sidecar' }, health: { watchMs } });

  /**
   * handle(), then start() — the startup gate and the window — retried while the lock is busy;
   * answers whether the operation showed `Watching` (InProgress) meanwhile.
   */
  async function upgradeThroughWindow(host: SandboxHost, name: string, release: ReturnType<typeof publish>) {
    const operation = store.create({ name, parameters: release.parameters });
    const sidecar = await daemon(host, null);
    expect(await sidecar.handle({ operation, phase: null, parameters: release.parameters })).toEqual({
      ok: true,
      value: { kind: 'gate' },
    });
    let watched = false;
    const watch = setInterval(() => (watched ||= store.get(name)?.watching === true), 50);
    try {
      let outcome = await sidecar.start();
      for (let attempt = 0; attempt < 20 && outcome.ok && outcome.value.kind === 'busy'; attempt += 1) {
        await new Promise((done) => setTimeout(done, 500));
        outcome = await sidecar.start();
      }
      expect(outcome).toEqual({ ok: true, value: { kind: 'open' } });
    } finally {
      clearInterval(watch);
    }
    return { watched };
  }

  it('sidecar, watch window: an agent that passes the gate and crashes 4 s in is rolled back, quarantined, Failed once', async () => {
    const host = await watchedHost(8_000);
    const release = publish({ version: '2.4.0', behaviour: { crashAfterSeconds: 4 } });
    expect(await upgradeThroughWindow(host, 'upgrade-window-crash', release)).toEqual({ watched: true });

    expect(store.get('upgrade-window-crash')).toMatchObject({ phase: 'Failed' });
    expect(store.terminalWrites('upgrade-window-crash')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'blue', record: false });
    expect(host.state().quarantine).toContain(release.digest);
    expect(existsSync(host.path('/etc/aks-flex-node/agent-upgrade-watch.json'))).toBe(false);
    expect(await host.waitRunning(host.slotPath('blue'))).toBe(true);
  });

  it('sidecar, watch window: an agent that stays healthy through its window completes and keeps running', async () => {
    const host = await watchedHost(3_000);
    const release = publish({ version: '2.5.0' });
    expect(await upgradeThroughWindow(host, 'upgrade-window-good', release)).toEqual({ watched: true });

    expect(store.get('upgrade-window-good')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(store.terminalWrites('upgrade-window-good')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(host.state().quarantine).not.toContain(release.digest);
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
  });
});
