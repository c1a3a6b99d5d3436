import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { SystemdWorld, type SandboxHost } from '../support/systemd/systemd-host.js';

/**
 * The direct path on a real systemd: the CLI runs inside the private namespace with `--root`,
 * systemd runs the compiled test agent from the slots, and every scenario checks links, unit
 * state, record and exit code.
 */
describe('direct path on a real systemd', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  const agent = (version: string, behaviour?: Parameters<typeof buildTestAgent>[1]['behaviour']) =>
    buildTestAgent(world.agentsDir(), { version, behaviour });

  beforeAll(async () => {
    world = await SystemdWorld.create();
    host = world.host();
  }, 60_000);
  afterAll(async () => world?.close());

  it('migrates a legacy host while its unit runs, without stopping the agent', async () => {
    const legacy = host.path('/usr/local/bin/aks-flex-node');
    mkdirSync(dirname(legacy), { recursive: true });
    copyFileSync(agent('1.0.0'), legacy);
    // The unit as the legacy installer wrote it: ExecStart names the binary itself.
    mkdirSync(host.path('/etc/systemd/system'), { recursive: true });
    writeFileSync(host.path(`/etc/systemd/system/${host.unit}`), `[Service]\nExecStart=${legacy} agent\n`);
    expect(host.systemctl('daemon-reload').status).toBe(0);
    expect(host.systemctl('start', host.unit).status).toBe(0);
    expect(await host.waitRunning(legacy)).toBe(true);
    const pidBefore = host.systemd.property(host.unit, 'MainPID');

    const migrated = host.cliJson(['migrate']);
    expect(migrated.status).toBe(0);

    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'blue',
      lastGood: 'blue',
    });
    expect(readFileSync(host.slotPath('blue'))).toEqual(readFileSync(agent('1.0.0')));
    const unitText = readFileSync(host.path(`/etc/systemd/system/${host.unit}`), 'utf8');
    expect(unitText).toContain(`ExecStart=${host.path('/usr/local/lib/aks-flex-node/aks-flex-node-current')} agent`);
    expect(unitText).toContain(`OnFailure=${host.recoveryUnit}`);
    // Same process, still running: migration does not restart the agent.
    expect({ state: host.activeState(), pid: host.systemd.property(host.unit, 'MainPID') }).toEqual({
      state: 'active',
      pid: pidBefore,
    });
    // systemd itself reads the rewritten unit: a restart runs the blue slot through the current link.
    expect(host.systemd.property(host.unit, 'NeedDaemonReload')).toBe('no');
    expect(host.systemctl('restart', host.unit).status).toBe(0);
    expect(await host.waitRunning(host.slotPath('blue'))).toBe(true);

    expect(host.cliJson(['migrate']).status).toBe(0);
    expect(host.systemd.property(host.unit, 'MainPID')).not.toBe(pidBefore);
  });

  it('activates a healthy candidate: current switches, the unit runs it, last-good keeps the previous', async () => {
    const result = host.cliJson(['activate', agent('2.0.0')]);
    expect(result.status).toBe(0);
    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'blue',
    });
    expect(host.activeState()).toBe('active');
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(host.recordExists()).toBe(false);
  });

  it('rolls back a candidate that crashes on start: exit 3, previous binary running, candidate quarantined', async () => {
    const result = host.cliJson(['activate', agent('3.0.0', 'crash-on-start')]);
    expect(result.status).toBe(3);
    expect((result.doc.error as { code: string }).code).toBe('E_UNHEALTHY');
    expect({ current: host.link('current'), lastGood: host.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'green',
    });
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(host.activeState()).toBe('active');
    expect(host.state().quarantine).toHaveLength(1);
    // If the recovery unit ran when systemd gave up on the candidate, it found no managed record and did nothing.
    expect(host.systemd.property(host.recoveryUnit, 'Result')).toBe('success');
    expect(host.recordExists()).toBe(false);
  });

  it('rolls back a candidate that crashes a second after starting', async () => {
    const result = host.cliJson(['activate', agent('3.1.0', { crashAfterSeconds: 1 })]);
    expect(result.status).toBe(3);
    expect(host.link('current')).toBe('green');
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(host.state().quarantine).toHaveLength(2);
  });

  it('leaves a stopped agent stopped (reset or rejoin) while it switches', async () => {
    expect(host.systemctl('stop', host.unit).status).toBe(0);
    const result = host.cliJson(['activate', agent('4.0.0')]);
    expect(result.status).toBe(0);
    expect(host.link('current')).toBe('blue');
    expect(host.activeState()).toBe('inactive');
    expect(host.mainExecutable()).toBe(null);
  });
});
