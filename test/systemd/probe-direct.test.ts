import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent, healthFailFile } from '../support/agent/build-agent.js';
import { FAST_HEALTH, SystemdWorld, type SandboxHost } from '../support/systemd/systemd-host.js';

/** The socket as the configuration names it (under `--root`); the agent is told its real path. */
const SOCKET = '/run/aks-flex-node-health.sock';

/**
 * The direct path gated on an HTTP probe on a real systemd: the unit runs the compiled test agent,
 * which serves its health on a unix socket and answers 503 while the test's file for its version
 * exists; the CLI inside the namespace probes it after the process proved stable, and watches
 * a candidate through its watch window once one is configured.
 */
describe('health probe on the direct path on a real systemd', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  beforeAll(async () => {
    world = await SystemdWorld.create();
    const probe = {
      http: { socket: SOCKET, path: '/healthz' },
      periodMs: 300,
      successThreshold: 2,
      failureThreshold: 3,
    };
    host = await world.runningHost((root) => ({
      agent: { args: ['agent', '--health-socket', join(root, SOCKET)] },
      health: { ...FAST_HEALTH, probe },
    }));
  }, 90_000);
  afterAll(async () => world?.close());

  it('activates a release whose probe passes', async () => {
    const result = host.cliJson(['activate', buildTestAgent(world.agentsDir(), { version: '2.0.0' })]);
    expect(result.status).toBe(0);
    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'blue',
    });
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(existsSync(host.path(SOCKET))).toBe(true);
  });

  it('rolls back a release whose probe fails: exit 3, E_UNHEALTHY, quarantined, last-good and its agent untouched', async () => {
    const candidate = buildTestAgent(world.agentsDir(), { version: '3.0.0' });
    writeFileSync(healthFailFile(host.path(SOCKET), '3.0.0'), '');
    const goodBinary = readFileSync(host.slotPath('green'));
    const result = host.cliJson(['activate', candidate]);
    expect(result.status).toBe(3);
    expect((result.doc.error as { code: string }).code).toBe('E_UNHEALTHY');
    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'green',
    });
    expect(readFileSync(host.slotPath('green'))).toEqual(goodBinary);
    expect(host.state().quarantine).toContain(digest(candidate));
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(host.activeState()).toBe('active');
    expect(host.recordExists()).toBe(false);
  });

  it('rolls back a release that passes the gate and crashes 4 s in, inside its watch window', async () => {
    const file = host.path('/etc/aks-flex-node/agent-upgrade.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { health: Record<string, unknown> };
    writeFileSync(file, JSON.stringify({ ...config, health: { ...config.health, watchMs: 8_000 } }));
    const candidate = buildTestAgent(world.agentsDir(), { version: '4.0.0', behaviour: { crashAfterSeconds: 4 } });
    const result = host.cliJson(['activate', candidate]);
    expect({ status: result.status, code: (result.doc.error as { code?: string } | undefined)?.code }).toEqual({
      status: 3,
      code: 'E_UNHEALTHY',
    });
    expect(host.link('current')).toBe('green');
    expect(host.state().quarantine).toContain(digest(candidate));
    expect(existsSync(host.path('/etc/aks-flex-node/agent-upgrade-watch.json'))).toBe(false);
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
  });
});
