import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent, type TestAgentBuild } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { machineOperation } from '../support/kube/machine-operations.js';
import { snapshotTree } from '../support/real-tree.js';
import { CLI, SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';
import { fakeCluster, realCluster, type E2eCluster, type FakeCluster, type OperationStatus } from './clusters.js';
import { plainReleaseHost, signedReleaseHost, type ReleaseHost } from './release-hosts.js';

const MACHINE = 'node-1';
const CANARY = 'CANARY-e2e-5d1f';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** One booted private systemd for the whole file; each API server gets a sandbox host of its own. */
let world: SystemdWorld;
beforeAll(async () => {
  world = await SystemdWorld.create();
}, 60_000);
afterAll(async () => {
  await world?.close();
});

/** What a suite works with once its daemon runs. */
interface Running<C extends E2eCluster> {
  readonly cluster: C;
  readonly host: SandboxHost;
  readonly releases: ReleaseHost;
  publish(build: TestAgentBuild): {
    readonly parameters: Record<string, string>;
    readonly digest: string;
    readonly archive: Uint8Array;
  };
  terminal(name: string, timeoutMs?: number): Promise<OperationStatus>;
  terminalWrites(name: string): Promise<number>;
  /** The status and the daemon's last log lines, for a failed expectation's message. */
  explain(status: OperationStatus): string;
}

/**
 * End to end: `agent-upgrade daemon` runs as a systemd service of a private systemd (sidecar of the
 * compiled test agent), talks to the API server `start` brings up, downloads releases from a
 * loopback server (or, with `releaseHost: signedReleaseHost`, a TUF repository it trusts) and
 * upgrades the agent as MachineOperations arrive. `more` adds the cases only that setup can
 * stage; they run after the shared upgrade cases.
 */
function daemonEndToEnd<C extends E2eCluster>(
  title: string,
  unit: string,
  start: () => Promise<C>,
  options: { more?: (running: () => Running<C>) => void; releaseHost?: () => Promise<ReleaseHost> } = {},
): void {
  describe(`agent-upgrade daemon end to end (${title}, real systemd, C agent)`, () => {
    let running: Running<C>;
    let releases: ReleaseHost;
    const logPath = () => join(world.base, `${unit}.log`);

    beforeAll(async () => {
      const cluster = await start();
      releases = await (options.releaseHost ?? plainReleaseHost)();
      const host = await world.runningHost({
        agent: { mode: 'sidecar' },
        cluster: { manager: 'kubernetes', kubeconfig: cluster.kubeconfigPath, machineName: MACHINE },
        ...releases.config,
      });
      releases.install((path) => host.path(path));
      running = runningOn(cluster, host, releases, logPath());
      const started = host.systemd.run('systemd-run', [
        `--unit=${unit}`,
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
      expect(await waitFor(() => cluster.watching(), 30_000)).toBe(true);
    }, 240_000);

    afterAll(async () => {
      running?.host.systemctl('stop', unit);
      await releases?.close();
      await running?.cluster.close();
    }, 60_000);

    sharedCases(() => running);
    options.more?.(() => running);

    it('the download URL credential appears in no status, watch event or log line; nor do the credentials', async () => {
      const { cluster } = running;
      const writes = await Promise.all(
        ['upgrade-1', 'upgrade-crash', 'upgrade-retry', 'upgrade-storm'].map((name) => cluster.statusWrites(name)),
      );
      expect(writes.flat().length).toBeGreaterThan(0);
      expect(JSON.stringify(writes)).not.toContain(CANARY);
      expect(existsSync(logPath())).toBe(true);
      const log = readFileSync(logPath(), 'utf8');
      expect(log.length).toBeGreaterThan(0);
      expect(log).not.toContain(CANARY);
      for (const secret of cluster.secrets) expect(log).not.toContain(secret);
    });
  });
}

function runningOn<C extends E2eCluster>(
  cluster: C,
  host: SandboxHost,
  releases: ReleaseHost,
  logPath: string,
): Running<C> {
  return {
    cluster,
    host,
    releases,
    publish(build) {
      const binary = readFileSync(buildTestAgent(world.agentsDir(), { ...build, embedsUpgrader: true }));
      const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binary);
      const parameters = releases.publish(archive, build.version, TEST_IDENTITY.arch, `sig=${CANARY}`);
      return { parameters, digest: sha256(binary), archive };
    },
    async terminal(name, timeoutMs = 60_000) {
      const finished = async () => ['Complete', 'Failed'].includes((await cluster.status(name))?.phase ?? '');
      await waitFor(finished, timeoutMs, 200);
      // Publish comes before delete: the record goes a moment after the status is written.
      await waitFor(() => !host.recordExists(), 10_000);
      return (await cluster.status(name)) ?? {};
    },
    async terminalWrites(name) {
      const writes = await cluster.statusWrites(name);
      return writes.filter((status) => ['Complete', 'Failed'].includes(String(status['phase']))).length;
    },
    explain(status) {
      const log = existsSync(logPath) ? readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-40) : [];
      return JSON.stringify({ status, log }, undefined, 1);
    },
  };
}

function sharedCases<C extends E2eCluster>(get: () => Running<C>): void {
  const containerDigest = (host: SandboxHost) =>
    sha256(readFileSync(host.path('/var/lib/machines/kube1/usr/local/bin/aks-flex-node')));

  it('upgrades: Complete/Succeeded, the agent runs the candidate, host and nspawn digests equal', async () => {
    const { cluster, host, publish, terminal, terminalWrites, explain } = get();
    const release = publish({ version: '2.0.0' });
    await cluster.create(machineOperation('upgrade-1', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-1');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }, explain(status)).toEqual({
      phase: 'Complete',
      reason: 'Succeeded',
    });
    expect(await terminalWrites('upgrade-1')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(host.mainExecutable()).toBe(host.slotPath('green'));
    expect(sha256(readFileSync(host.slotPath('green')))).toBe(release.digest);
    expect(containerDigest(host)).toBe(release.digest);
  });

  it('a candidate that crashes is rolled back to last-good and Failed/DaemonFailed is published', async () => {
    const { cluster, host, publish, terminal, terminalWrites } = get();
    const release = publish({ version: '3.0.0', behaviour: 'crash-on-start' });
    await cluster.create(machineOperation('upgrade-crash', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-crash');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }).toEqual({
      phase: 'Failed',
      reason: 'DaemonFailed',
    });
    expect(await terminalWrites('upgrade-crash')).toBe(1);
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: 'green', record: false });
    expect(await host.waitRunning(host.slotPath('green'))).toBe(true);
    expect(containerDigest(host)).toBe(sha256(readFileSync(host.slotPath('green'))));
  });

  it('a new operation after the failure installs into the inactive slot and completes', async () => {
    const { cluster, host, publish, terminal, explain } = get();
    const release = publish({ version: '3.1.0' });
    await cluster.create(machineOperation('upgrade-retry', MACHINE, { parameters: release.parameters }));
    const status = await terminal('upgrade-retry');
    expect(status.phase, explain(status)).toBe('Complete');
    expect(host.link('current')).toBe('blue');
    expect(sha256(readFileSync(host.slotPath('blue')))).toBe(release.digest);
    expect(host.mainExecutable()).toBe(host.slotPath('blue'));
  });

  it('invalid parameters: Failed/InvalidParameters and the host untouched; other kinds and machines are left alone', async () => {
    const { cluster, host, publish, terminal } = get();
    const before = snapshotTree(host.path('/usr/local/lib/aks-flex-node'));
    await cluster.create(machineOperation('reboot', MACHINE, { operationKind: 'NodeReboot' }));
    await cluster.create(
      machineOperation('elsewhere', 'node-9', { parameters: publish({ version: '9.0.0' }).parameters }),
    );
    await cluster.create(machineOperation('bad', MACHINE, { parameters: { downloadURL: '', sha256: 'xyz' } }));
    const status = await terminal('bad');
    expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }).toEqual({
      phase: 'Failed',
      reason: 'InvalidParameters',
    });
    expect(snapshotTree(host.path('/usr/local/lib/aks-flex-node'))).toEqual(before);
    expect(await cluster.status('reboot')).toBeUndefined();
    expect(await cluster.status('elsewhere')).toBeUndefined();
    expect(await cluster.statusWrites('reboot')).toEqual([]);
  });
}

daemonEndToEnd('fake API server', 'e2e-daemon-fake.service', () => fakeCluster(world.base), {
  more: (get: () => Running<FakeCluster>) => {
    it('a dropped watch and a storm of 409s during an upgrade still end in exactly one terminal status', async () => {
      const { cluster, publish, terminal, terminalWrites, explain } = get();
      const release = publish({ version: '4.0.0' });
      await cluster.create(machineOperation('upgrade-storm', MACHINE, { parameters: release.parameters }));
      expect(await waitFor(async () => (await cluster.status('upgrade-storm'))?.phase === 'InProgress', 30_000)).toBe(
        true,
      );
      cluster.api.dropWatches();
      cluster.api.conflictNext(5);
      const status = await terminal('upgrade-storm');
      expect(status.phase, explain(status)).toBe('Complete');
      expect(await terminalWrites('upgrade-storm')).toBe(1);
      // The re-opened watch still delivers new work.
      await cluster.create(
        machineOperation('after-storm', MACHINE, { parameters: { downloadURL: 'ftp://example.invalid/agent.tar.gz' } }),
      );
      expect((await terminal('after-storm')).phase).toBe('Failed');
    });
  },
});

daemonEndToEnd(
  'a real kube-apiserver, as a node with a client certificate, from a signed repository',
  'e2e-daemon-real.service',
  () => realCluster(MACHINE),
  {
    releaseHost: signedReleaseHost,
    more: (get) => {
      it('a release swapped on the release host: Failed/Untrusted, nothing installed, the agent runs on', async () => {
        const { cluster, host, publish, releases, terminal, explain } = get();
        const running = host.mainExecutable();
        const before = snapshotTree(host.path('/usr/local/lib/aks-flex-node'));
        const release = publish({ version: '5.0.0' });
        releases.swap(release.archive, '5.0.0', publish({ version: '5.0.1', behaviour: 'crash-on-start' }).archive);
        await cluster.create(machineOperation('upgrade-swapped', MACHINE, { parameters: release.parameters }));
        const status = await terminal('upgrade-swapped');
        expect({ phase: status.phase, reason: status.conditions?.[0]?.reason }, explain(status)).toEqual({
          phase: 'Failed',
          reason: 'Untrusted',
        });
        expect(snapshotTree(host.path('/usr/local/lib/aks-flex-node'))).toEqual(before);
        expect(host.mainExecutable()).toBe(running);
      });
    },
  },
);
