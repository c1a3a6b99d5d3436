import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { CLI, SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';

const BUILD_SEA = join(dirname(CLI), '../scripts/build-sea.mjs');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * The single executable as its own agent (self-hosted) under a real systemd: the unit runs
 * `agent-upgrade daemon` from the current link; that binary upgrades itself from v1 to v2 with
 * `install --url`, and rolls back when offered a release that crashes on start.
 */
describe('the single executable upgrades itself under a real systemd', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  let releases: HostileServer;
  const sea: Record<string, string> = {};
  const entry = () => host.path('/usr/local/bin/aks-flex-node');

  beforeAll(async () => {
    world = await SystemdWorld.create();
    for (const version of ['1.0.0', '2.0.0']) {
      sea[version] = join(world.base, `sea-${version}`);
      execFileSync(process.execPath, [BUILD_SEA, '--output', sea[version] as string, '--version', version], {
        stdio: 'pipe',
        timeout: 120_000,
      });
    }
    releases = await startHostileServer();
    host = world.host({ agent: { mode: 'self-hosted' }, cluster: { manager: 'none' } });
    // The unit runs the binary as the agent: its daemon, with this sandbox's configuration.
    const configPath = host.path('/etc/aks-flex-node/agent-upgrade.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { agent: Record<string, unknown> };
    config.agent['args'] = ['daemon', '--root', host.root, '--log-level', 'info'];
    writeFileSync(configPath, JSON.stringify(config));
    mkdirSync(dirname(entry()), { recursive: true });
    copyFileSync(sea['1.0.0'] as string, entry());
    expect(host.systemd.run(entry(), ['migrate', '--root', host.root]).status).toBe(0);
    expect(host.systemctl('start', host.unit).status).toBe(0);
    expect(await host.waitRunning(host.slotPath('blue'))).toBe(true);
    // Still running after its startup gate opened: the daemon idles, waiting for work.
    await new Promise((done) => setTimeout(done, 1_000));
    expect({ state: host.activeState(), running: host.mainExecutable() }).toEqual({
      state: 'active',
      running: host.slotPath('blue'),
    });
  }, 240_000);

  afterAll(async () => {
    await releases?.close();
    await world?.close();
  });

  function publish(name: string, binary: Uint8Array): string[] {
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binary);
    releases.route(`/${name}.tar.gz`, serve(archive));
    return ['--url', releases.url(`/${name}.tar.gz`), '--sha256', sha256(archive)];
  }

  /** The installed binary (entry → current → slot) runs a command; async, as it downloads from this process. */
  const installed = (args: readonly string[]) =>
    host.systemd.runAsync(entry(), [...args, '--root', host.root], { timeoutMs: 120_000 });

  /**
   * `installed`, run again while it exits 4 (E_LOCK_BUSY), as an operator would: the daemon that
   * just started holds the host lock for its startup gate, which a loaded machine makes longer.
   */
  async function installedOnceLockFree(args: readonly string[]) {
    for (let attempt = 1; ; attempt += 1) {
      const result = await installed(args);
      if (result.status !== 4 || attempt === 20) return result;
      await new Promise((done) => setTimeout(done, 500));
    }
  }

  it('v1 installs v2 of itself: current switches, systemd runs v2, and the entry reports 2.0.0', async () => {
    expect((await installed(['version'])).stdout.trim()).toBe('agent-upgrade 1.0.0');
    const result = await installed(['install', ...publish('v2', readFileSync(sea['2.0.0'] as string)), '--json']);
    expect({ status: result.status, out: result.status === 0 ? '' : result.stdout + result.stderr }).toEqual({
      status: 0,
      out: '',
    });
    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'blue',
    });
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect((await installed(['version'])).stdout.trim()).toBe('agent-upgrade 2.0.0');
  }, 120_000);

  it('v2 rolls back from a v3 that crashes on start: exit 3, v2 runs again', async () => {
    const broken = readFileSync(buildTestAgent(world.agentsDir(), { version: '3.0.0', behaviour: 'crash-on-start' }));
    const result = await installedOnceLockFree(['install', ...publish('v3', broken), '--json']);
    expect(result.status).toBe(3);
    expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe('E_UNHEALTHY');
    expect(host.link('current')).toBe('green');
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect((await installed(['version'])).stdout.trim()).toBe('agent-upgrade 2.0.0');
  }, 120_000);
});
