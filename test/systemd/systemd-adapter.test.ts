import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SystemdServiceManager } from '../../src/adapters/node/systemd/systemd-service-manager.js';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { SystemdWorld, type SandboxHost } from '../support/systemd/systemd-host.js';

const QUICK = { timeoutMs: 4_000, stableMs: 1_000, pollMs: 250 };

/** The systemd ServiceManager against a real systemd: assets, activity, restarts and health. */
describe('SystemdServiceManager on a real systemd', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  let services: SystemdServiceManager;
  const unitFile = () => host.path(`/etc/systemd/system/${host.unit}`);

  beforeAll(async () => {
    world = await SystemdWorld.create();
    host = world.host();
    const legacy = host.path('/usr/local/bin/aks-flex-node');
    mkdirSync(dirname(legacy), { recursive: true });
    copyFileSync(buildTestAgent(world.agentsDir(), { version: '1.0.0' }), legacy);
    services = await host.serviceManager();
  }, 60_000);
  afterAll(async () => world?.close());

  it('reports a unit that does not exist as absent and does not start it', async () => {
    expect(await services.activity()).toBe('absent');
    expect(await services.restart()).toEqual({ restarted: false });
    expect(await services.mainExecutable()).toBe(null);
  });

  it('writes the units and the recovery script once, with their modes, and systemd loads them', async () => {
    // Migration creates the slot directory (which holds the script) before it converges the assets.
    mkdirSync(host.path('/usr/local/lib/aks-flex-node'), { mode: 0o750, recursive: true });
    expect(await services.assetsCurrent()).toBe(false);
    expect(await services.convergeAssets()).toEqual({ changed: true });
    expect(await services.convergeAssets()).toEqual({ changed: false });
    expect(await services.assetsCurrent()).toBe(true);
    const modes = [
      unitFile(),
      host.path(`/etc/systemd/system/${host.recoveryUnit}`),
      host.path('/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh'),
    ].map((path) => (statSync(path).mode & 0o7777).toString(8));
    expect(modes).toEqual(['644', '644', '750']);
    expect(host.systemd.property(host.unit, 'LoadState')).toBe('loaded');
    expect(host.systemd.property(host.recoveryUnit, 'LoadState')).toBe('loaded');
  });

  it('rewrites a unit someone edited and reloads systemd', async () => {
    writeFileSync(unitFile(), readFileSync(unitFile(), 'utf8').replace('Restart=on-failure', 'Restart=no'));
    expect(await services.assetsCurrent()).toBe(false);
    expect(await services.convergeAssets()).toEqual({ changed: true });
    expect(host.systemd.property(host.unit, 'Restart')).toBe('on-failure');
    expect(host.systemd.property(host.unit, 'NeedDaemonReload')).toBe('no');
  });

  it('after migration the installed units pass `systemd-analyze verify`; a stopped agent stays stopped on restart', async () => {
    expect(host.cliJson(['migrate']).status).toBe(0);
    // verify also checks that ExecStart's program exists, which it does once migration made current.
    // Documentation= names man:agent-upgrade(8), which verify looks up: the repository's page.
    const manPath = join(dirname(fileURLToPath(import.meta.url)), '../../man');
    const verify = spawnSync(
      'systemd-analyze',
      ['verify', unitFile(), host.path(`/etc/systemd/system/${host.recoveryUnit}`)],
      { encoding: 'utf8', env: { ...process.env, MANPATH: manPath } },
    );
    expect({ status: verify.status, stderr: verify.stderr }).toEqual({ status: 0, stderr: '' });
    expect(await services.activity()).toBe('inactive');
    expect(await services.restart()).toEqual({ restarted: false });
    expect(host.activeState()).toBe('inactive');
  });

  it("restarts a running agent and proves health from MainPID's executable", async () => {
    expect(host.systemctl('start', host.unit).status).toBe(0);
    const pidBefore = host.systemd.property(host.unit, 'MainPID');
    expect(await services.restart()).toEqual({ restarted: true });
    expect(host.systemd.property(host.unit, 'MainPID')).not.toBe(pidBefore);
    expect(await services.activity()).toBe('active');
    expect(await services.mainExecutable()).toBe(host.slotPath('blue'));
    expect(await services.waitHealthy(host.slotPath('blue'), QUICK)).toEqual({ kind: 'healthy' });
    expect((await services.waitHealthy(host.path('/somewhere/else'), QUICK)).kind).toBe('unhealthy');
  });

  it('a unit written without its reload (the reload failed, or the writer died) is reloaded by the next convergence', async () => {
    // The agent runs, so systemd holds the unit loaded. The files on disk are what this
    // configuration renders; only systemd still has the old copy.
    const text = readFileSync(unitFile(), 'utf8');
    writeFileSync(unitFile(), text.replace('Restart=on-failure', 'Restart=no'));
    host.systemd.run('systemctl', ['daemon-reload']);
    writeFileSync(unitFile(), text);
    expect(host.systemd.property(host.unit, 'NeedDaemonReload')).toBe('yes');
    expect(await services.assetsCurrent()).toBe(false);
    expect(await services.convergeAssets()).toEqual({ changed: false });
    expect(host.systemd.property(host.unit, 'NeedDaemonReload')).toBe('no');
    expect(host.systemd.property(host.unit, 'Restart')).toBe('on-failure');
    expect(await services.assetsCurrent()).toBe(true);
  });

  it('schedules a restart through a collected transient unit and returns before it happens', async () => {
    const pidBefore = host.systemd.property(host.unit, 'MainPID');
    const startedMs = Date.now();
    await services.scheduleRestart();
    expect(Date.now() - startedMs).toBeLessThan(2_000);
    expect(await host.systemd.waitFor(() => host.systemd.property(host.unit, 'MainPID') !== pidBefore, 10_000)).toBe(
      true,
    );
    expect(
      await host.systemd.waitFor(
        () =>
          host
            .systemctl('list-units', '--all', '--no-legend', `${host.unit.replace('.service', '')}-restart-*`)
            .stdout.trim() === '',
        10_000,
      ),
    ).toBe(true);
    expect(await services.mainExecutable()).toBe(host.slotPath('blue'));
  });

  it('a scheduled restart leaves an agent that was stopped meanwhile stopped', async () => {
    await services.scheduleRestart();
    expect(host.systemctl('stop', host.unit).status).toBe(0);
    await new Promise((done) => setTimeout(done, 1_500));
    expect(host.activeState()).toBe('inactive');
  });

  it('a crash-looping agent ends failed; health gives up early; a reset restart brings the fixed binary back', async () => {
    const crashing = buildTestAgent(world.agentsDir(), { version: '9.9.9', behaviour: 'crash-on-start' });
    copyFileSync(crashing, host.path('/usr/local/lib/aks-flex-node/aks-flex-node-green'));
    spawnSync('ln', ['-sfn', 'aks-flex-node-green', host.path('/usr/local/lib/aks-flex-node/aks-flex-node-current')]);
    // Enqueued, not awaited: with Type=exec the start job itself fails when the binary exits at
    // once (or not, by timing); what is judged here is the health wait and the failed unit.
    expect(host.systemctl('start', '--no-block', host.unit).status).toBe(0);
    const startedMs = Date.now();
    const verdict = await services.waitHealthy(host.slotPath('green'), {
      timeoutMs: 20_000,
      stableMs: 1_000,
      pollMs: 250,
    });
    expect(verdict.kind).toBe('unhealthy');
    expect(Date.now() - startedMs).toBeLessThan(15_000);
    expect(await services.activity()).toBe('failed');

    spawnSync('ln', ['-sfn', 'aks-flex-node-blue', host.path('/usr/local/lib/aks-flex-node/aks-flex-node-current')]);
    expect(await services.restart({ resetFailed: true })).toEqual({ restarted: true });
    expect(await services.waitHealthy(host.slotPath('blue'), QUICK)).toEqual({ kind: 'healthy' });
  });

  it('runs the agent from a slot directory with a space, "$$", "${HOME}" and "%" in its path, argv[0] unchanged', async () => {
    // systemd expands none of these in the program path, but "$$" and "${…}" in argv[0].
    const slotDir = '/usr/local/lib/agent a$$b${HOME}%c';
    const hostile = world.host({ paths: { slotDir } });
    const legacy = hostile.path('/usr/local/bin/aks-flex-node');
    mkdirSync(dirname(legacy), { recursive: true });
    copyFileSync(buildTestAgent(world.agentsDir(), { version: '1.0.0' }), legacy);
    expect(hostile.cliJson(['migrate']).status).toBe(0);
    expect(hostile.systemctl('start', hostile.unit).status).toBe(0);
    expect(await hostile.waitRunning(realpathSync(hostile.path(`${slotDir}/aks-flex-node-blue`)))).toBe(true);
    const pid = hostile.systemd.property(hostile.unit, 'MainPID');
    const argv = readFileSync(join(hostile.systemd.procRoot, pid, 'cmdline'), 'utf8').split('\0');
    expect(argv.slice(0, 2)).toEqual([hostile.path(`${slotDir}/aks-flex-node-current`), 'agent']);
    expect(hostile.systemctl('stop', hostile.unit).status).toBe(0);
  });
});
