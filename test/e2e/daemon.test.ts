import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent, type TestAgentBuild } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { startFakeApiServer, type FakeApiServer } from '../support/kube/fake-apiserver.js';
import { machineOperation, writeKubeconfig } from '../support/kube/machine-operations.js';
import { snapshotTree } from '../support/real-tree.js';
import { CLI, SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';

const MACHINE = 'node-1';
const CANARY = 'CANARY-e2e-5d1f';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface OperationStatus {
  readonly phase?: string;
  readonly message?: string;
  readonly conditions?: readonly { readonly reason?: string }[];
}

/**
 * End to end: `agent-upgrade daemon` runs as a systemd service of a private systemd (sidecar of the
 * compiled test agent), talks to a protocol-faithful API server over HTTP, downloads releases from
 * a loopback server and upgrades the agent as MachineOperations arrive.
 */
describe('agent-upgrade daemon end to end (API server, real systemd, C agent)', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  let api: FakeApiServer;
  let releases: HostileServer;
  const daemonUnit = 'e2e-daemon.service';
  const logPath = () => join(world.base, 'daemon.log');

  beforeAll(async () => {
    world = await SystemdWorld.create();
    api = await startFakeApiServer({ bookmarkIntervalMs: 1_000 });
    releases = await startHostileServer();
    host = await world.runningHost({
      agent: { mode: 'sidecar' },
      cluster: { manager: 'kubernetes', kubeconfig: writeKubeconfig(world.base, api.origin), machineName: MACHINE },
    });
    const started = host.systemd.run('systemd-run', [
      `--unit=${daemonUnit}`,
      `--property=StandardOutput=append:${logPath()}`,
      `--property=StandardError=append:${logPath()}`,
      // As installed: the bin's shebang starts Node with the daemon's V8 settings.
      CLI,
      'daemon',
      '--root',
      host.root,
      '--log-level',
      'debug',
    ]);
    expect(started.status).toBe(0);
    // The daemon is up once its watch is open.
    expect(await host.systemd.waitFor(() => api.openWatches().length > 0, 30_000)).toBe(true);
  }, 90_000);

  afterAll(async () => {
    host?.systemctl('stop', daemonUnit);
    await releases?.close();
    await api?.close();
    await world?.close();
  });

  function publish(build: TestAgentBuild): { readonly parameters: Record<string, string>; readonly digest: string } {
    const binary = readFileSync(buildTestAgent(world.agentsDir(), { ...build, embedsUpgrader: true }));
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binary);
    const path = `/agent-${build.version}.tar.gz`;
    releases.route(path, serve(archive));
    return {
      parameters: { downloadURL: `${releases.url(path)}?sig=${CANARY}`, sha256: sha256(archive) },
      digest: sha256(binary),
    };
  }

  async function terminal(name: string, timeoutMs = 60_000): Promise<OperationStatus> {
    const phase = () => (api.get(name)?.status as OperationStatus | undefined)?.phase;
    await host.systemd.waitFor(() => phase() === 'Complete' || phase() === 'Failed', timeoutMs);
    // Publish comes before delete: the record goes a moment after the status is written.
    await host.systemd.waitFor(() => !host.recordExists(), 10_000);
    return (api.get(name)?.status ?? {}) as OperationStatus;
  }

  const terminalWrites = (name: string) =>
    api.statusWrites(name).filter((status) => ['Complete', 'Failed'].includes(String(status['phase']))).length;
  const containerDigest = () => sha256(readFileSync(host.path('/var/lib/machines/kube1/usr/local/bin/aks-flex-node')));

  it('upgrades: Complete/Succeeded, the agent runs the candidate, host and nspawn digests equal', async () => {
    const release = publish({ version: '2.0.0' });
    api.create(machineOperation('upgrade-1', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-1');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }).toEqual({
      phase: 'Complete',
      reason: 'Succeeded',
    });
    expect(terminalWrites('upgrade-1')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(sha256(readFileSync(host.slotPath('green')))).toBe(release.digest);
    expect(containerDigest()).toBe(release.digest);
  });

  it('a candidate that crashes is rolled back to last-good and Failed/DaemonFailed is published', async () => {
    const release = publish({ version: '3.0.0', behaviour: 'crash-on-start' });
    api.create(machineOperation('upgrade-crash', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-crash');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }).toEqual({
      phase: 'Failed',
      reason: 'DaemonFailed',
    });
    expect(terminalWrites('upgrade-crash')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(containerDigest()).toBe(sha256(readFileSync(host.slotPath('green'))));
  });

  it('a new operation after the failure installs into the inactive slot and completes', async () => {
    const release = publish({ version: '3.1.0' });
    api.create(machineOperation('upgrade-retry', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-retry');
    expect(status.phase).toBe('Complete');
    expect(host.link('current')).toBe('blue');
    expect(sha256(readFileSync(host.slotPath('blue')))).toBe(release.digest);
    expect(host.mainExecutable()).toBe(host.slotPath('blue'));
  });

  it('a dropped watch and a storm of 409s during an upgrade still end in exactly one terminal status', async () => {
    const release = publish({ version: '4.0.0' });
    api.create(machineOperation('upgrade-storm', MACHINE, { parameters: release.parameters }));
    expect(
      await host.systemd.waitFor(
        () => (api.get('upgrade-storm')?.status as OperationStatus | undefined)?.phase === 'InProgress',
        30_000,
      ),
    ).toBe(true);
    api.dropWatches();
    api.conflictNext(5);
    const status = await terminal('upgrade-storm');
    expect(status.phase).toBe('Complete');
    expect(terminalWrites('upgrade-storm')).toBe(1);
    // The re-opened watch still delivers new work.
    api.create(
      machineOperation('after-storm', MACHINE, { parameters: { downloadURL: 'ftp://example.invalid/agent.tar.gz' } }),
    );
    expect((await terminal('after-storm')).phase).toBe('Failed');
  });

  it('invalid parameters: Failed/InvalidParameters and the host untouched; other kinds and machines are left alone', async () => {
    const before = snapshotTree(host.path('/usr/local/lib/aks-flex-node'));
    api.create(machineOperation('reboot', MACHINE, { operationKind: 'NodeReboot' }));
    api.create(machineOperation('elsewhere', 'node-9', { parameters: publish({ version: '9.0.0' }).parameters }));
    api.create(machineOperation('bad', MACHINE, { parameters: { downloadURL: '', sha256: 'xyz' } }));
    const status = await terminal('bad');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }).toEqual({
      phase: 'Failed',
      reason: 'InvalidParameters',
    });
    expect(snapshotTree(host.path('/usr/local/lib/aks-flex-node'))).toEqual(before);
    expect(api.get('reboot')?.status).toBeUndefined();
    expect(api.get('elsewhere')?.status).toBeUndefined();
    expect(api.statusWrites('reboot')).toEqual([]);
  });

  it('the download URL credential appears in no status, watch event or log line', () => {
    const statuses = JSON.stringify(
      ['upgrade-1', 'upgrade-crash', 'upgrade-retry', 'upgrade-storm'].map((name) => api.statusWrites(name)),
    );
    expect(statuses).not.toContain(CANARY);
    expect(existsSync(logPath())).toBe(true);
    const log = readFileSync(logPath(), 'utf8');
    expect(log.length).toBeGreaterThan(0);
    expect(log).not.toContain(CANARY);
    expect(log).not.toContain('test-token');
  });
});
