/**
 * A fleet rollout end to end on a real kube-apiserver: 12 machines, each a sandbox whose compiled
 * test agent runs under a real `agent-upgrade supervise` with a real `agent-upgrade daemon` beside
 * it, authenticating as its own node (`system:node:<name>`); two real `agent-upgrade controller`
 * replicas as the shipped controller ServiceAccount, electing a leader on a Lease. The shipped
 * CRDs, RBAC and admission policy are applied. What happened is read from the objects, the
 * Events, the Lease, /metrics and the API server's audit log — phases, reasons, counts and order,
 * never log text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControllerReplica, LEASE_DURATION_MS, leaseHolder } from '../support/kube/rollout-controllers.js';
import {
  agentVersions,
  childOperations,
  createObject,
  eventReasons,
  eventsAbout,
  machinesWithOverlappingOperations,
  operationCreates,
  parseTable,
  RELEASES,
  rolloutNamed,
  ROLLOUTS,
  rolloutStatusWrites,
} from '../support/kube/rollout-evidence.js';
import type { MachineSpec } from '../support/kube/rollout-fleet.js';
import { startRolloutWorld, type RolloutWorld } from '../support/kube/rollout-world.js';
import { waitFor } from '../support/wait-for.js';

// 9 amd64 and 3 arm64 machines over three zones (labels only: every host runs here). Twelve is
// enough for a diverse canary, two later waves and a failure budget; each machine is two Node
// processes and an agent, so more would only cost CPU time on a 2-core runner.
const MACHINES: MachineSpec[] = Array.from({ length: 12 }, (_, i) => ({
  name: `agent-${String(i).padStart(2, '0')}`,
  arch: i % 4 === 3 ? 'arm64' : 'amd64',
  zone: ['zone-a', 'zone-b', 'zone-c'][i % 3] as string,
}));
const ARCH_OF = new Map(MACHINES.map((m) => [m.name, m.arch]));
const V1 = '1.0.0';
const V2 = '2.0.0';
const V3 = '3.0.0';
const SELECTOR = { matchLabels: { 'node-role.kubernetes.io/agent': '' } };

let world: RolloutWorld;
const cluster = () => world.cluster;

function rollout(name: string, spec: Record<string, unknown>): object {
  return { apiVersion: 'agent-upgrade.dev/v1alpha1', kind: 'AgentRollout', metadata: { name }, spec };
}

beforeAll(async () => {
  world = await startRolloutWorld(MACHINES, [
    { name: 'agent-v1', version: V1 },
    // v2's arm64 artifact is an agent that exits at start: it never proves healthy.
    { name: 'agent-v2', version: V2, arm64CrashesOnStart: true },
    { name: 'agent-v3', version: V3 },
  ]);
}, 300_000);

afterAll(async () => {
  await world?.stop();
}, 90_000);

/** The replica that holds the Lease now (it must be one of ours). */
async function leader(): Promise<ControllerReplica> {
  const { holder } = await leaseHolder(cluster());
  const found = world.replicas.find((replica) => replica.identity === holder);
  if (found === undefined) throw new Error(`the Lease is held by "${holder}"`);
  return found;
}

async function phaseOf(name: string): Promise<string | undefined> {
  return (await rolloutNamed(cluster(), name)).status?.phase;
}

/**
 * The Nodes' agent-version annotations once `machines` all report `version`, or as they stand
 * after 20 s. A daemon writes the annotation after its gate publishes Complete (or Failed after a
 * rollback), so a rollout can end a moment before the last report lands.
 */
async function versionsOnceReported(machines: string[], version: string): Promise<Record<string, string | undefined>> {
  const reported = async () => {
    const versions = await agentVersions(cluster());
    return machines.every((name) => versions[name] === version);
  };
  await waitFor(reported, 20_000, 250);
  return agentVersions(cluster());
}

describe('a fleet rollout on a real API server with real daemons and two controller replicas', () => {
  it('exactly one replica holds the Lease, and only its /metrics says it leads', async () => {
    const settled = async () => {
      const { holder } = await leaseHolder(cluster());
      const gauges = await Promise.all(world.replicas.map((replica) => replica.leaderGauge()));
      return world.replicas.every((replica, i) => gauges[i] === (replica.identity === holder ? 1 : 0));
    };
    expect(await waitFor(settled, 30_000, 250)).toBe(true);
    expect(['a', 'b']).toContain((await leaseHolder(cluster())).holder);
  });

  it('a failing arm64 canary halts v2: quarantined, nothing forward after the halt, arm64 blamed', async () => {
    await createObject(
      cluster(),
      ROLLOUTS,
      rollout('fleet-v2', {
        releaseRef: { name: 'agent-v2' },
        targets: { selector: SELECTOR },
        state: 'Run',
        strategy: {
          waves: [
            { name: 'canary', count: 4, maxInFlight: 4, failureBudget: 0 },
            { name: 'rest', percent: 100, maxInFlight: 4 },
          ],
          operationTimeout: '5m',
          onFailure: 'RollBackAll',
          quarantineOnHalt: true,
        },
        rollback: { releaseRef: { name: 'agent-v1' }, maxInFlight: '100%', failureBudget: 0 },
      }),
    );
    const ended = async () => ['RolledBack', 'Failed'].includes((await phaseOf('fleet-v2')) ?? '');
    expect(await waitFor(ended, 150_000, 500), (await leader()).logTail()).toBe(true);
    const { status } = await rolloutNamed(cluster(), 'fleet-v2');
    expect(status?.halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary' });
    const forward = (await childOperations(cluster(), 'fleet-v2')).filter((op) => op.purpose === 'upgrade');
    // The canary spreads over the architectures; only it was ever dispatched.
    expect(forward.map((op) => op.wave)).toEqual(['canary', 'canary', 'canary', 'canary']);
    const arm64 = forward.filter((op) => ARCH_OF.get(op.machineRef) === 'arm64');
    const amd64 = forward.filter((op) => ARCH_OF.get(op.machineRef) === 'amd64');
    expect(arm64.length).toBeGreaterThan(0);
    expect(amd64.length).toBeGreaterThan(0);
    expect(arm64.map((op) => [op.phase, op.reason])).toEqual(arm64.map(() => ['Failed', 'DaemonFailed']));
    expect(amd64.map((op) => [op.phase, op.reason])).toEqual(amd64.map(() => ['Complete', 'Succeeded']));
    expect(status?.failures?.byLabel?.['kubernetes.io/arch=arm64']).toBe(arm64.length);
    expect(status?.failures?.byLabel?.['kubernetes.io/arch=amd64']).toBeUndefined();
    expect(status?.failures?.byReason).toEqual({ DaemonFailed: arm64.length });
    const release = (await cluster().admin('GET', `${RELEASES}/agent-v2`)).json as { spec: { quarantine?: object } };
    expect(release.spec.quarantine).toMatchObject({ quarantined: true });

    // The first status write that carries the halt; every forward create came before it.
    const audit = await cluster().audit();
    const writes = rolloutStatusWrites(audit, 'fleet-v2');
    const haltedAt = writes.find((write) => write.status.halt !== undefined)?.at ?? '';
    expect(haltedAt).not.toBe('');
    const forwardNames = new Set(forward.map((op) => op.name));
    const creates = operationCreates(audit).filter((create) => forwardNames.has(create.name));
    expect(creates.filter((create) => create.at > haltedAt)).toEqual([]);
    const phases = writes.map((write) => write.status.phase).filter((p, i, all) => p !== all[i - 1]);
    expect(phases.slice(0, 2)).toEqual(['Progressing', 'RollingBack']);
    const events = await eventsAbout(cluster(), 'fleet-v2');
    // Only the leader acts: every Event names it.
    expect(new Set(events.map((event) => event.instance))).toEqual(new Set([(await leader()).identity]));
    const reasons = events.map((event) => event.reason);
    expect(reasons).toEqual(expect.arrayContaining(['FailureBudgetExceeded', 'RolloutHalted', 'RollbackStarted']));
    expect(reasons.indexOf('RolloutHalted')).toBeLessThan(reasons.indexOf('RollbackStarted'));
    expect(await eventReasons(cluster(), 'agent-v2')).toContain('ReleaseQuarantined');

    // An arm64 canary rolled itself back to last-good: v1 runs and is reported again.
    const versions = await versionsOnceReported(
      arm64.map((op) => op.machineRef),
      V1,
    );
    for (const op of arm64) {
      expect(versions[op.machineRef]).toBe(V1);
      expect(await world.fleet.runningDigest(op.machineRef)).toBe(world.digests[V1]);
    }
  }, 200_000);

  it('the fleet rollback gives each canary that completed v2 one rollback operation to v1, after the halt', async () => {
    const operations = await childOperations(cluster(), 'fleet-v2');
    const upgraded = operations.filter((op) => op.purpose === 'upgrade' && op.phase === 'Complete');
    const rollbacks = operations.filter((op) => op.purpose === 'rollback');
    expect(rollbacks.map((op) => op.machineRef).sort()).toEqual(upgraded.map((op) => op.machineRef).sort());
    expect(rollbacks.every((op) => op.wave === 'rollback')).toBe(true);
    const audit = await cluster().audit();
    const haltedAt = rolloutStatusWrites(audit, 'fleet-v2').find((write) => write.status.halt !== undefined)?.at ?? '';
    const names = new Set(rollbacks.map((op) => op.name));
    const creates = operationCreates(audit).filter((create) => names.has(create.name) && create.code === 201);
    expect(creates.length).toBe(rollbacks.length);
    expect(creates.every((create) => create.at > haltedAt)).toBe(true);
    const { status } = await rolloutNamed(cluster(), 'fleet-v2');
    expect(status?.rollback).toMatchObject({ size: upgraded.length });
  });

  // A rollback operation installs an older release: it carries allowDowngrade "true", which the
  // daemon's never-downgrade rule honours on the managed path.
  it('the fleet rollback returns every upgraded canary to v1 and ends RolledBack', async () => {
    const { status } = await rolloutNamed(cluster(), 'fleet-v2');
    const rollbacks = (await childOperations(cluster(), 'fleet-v2')).filter((op) => op.purpose === 'rollback');
    expect(rollbacks.map((op) => [op.phase, op.reason])).toEqual(rollbacks.map(() => ['Complete', 'Succeeded']));
    expect(status?.phase).toBe('RolledBack');
    expect(status?.rollback).toMatchObject({ phase: 'Completed', rolledBack: rollbacks.length });
    expect(await eventReasons(cluster(), 'fleet-v2')).toContain('RolledBack');
    const versions = await versionsOnceReported(
      MACHINES.map((m) => m.name),
      V1,
    );
    expect(Object.values(versions)).toEqual(MACHINES.map(() => V1));
    for (const machine of MACHINES) expect(await world.fleet.runningDigest(machine.name)).toBe(world.digests[V1]);
  });

  it('SIGKILL of the leader mid-rollout: the standby takes over within the lease, and v3 reaches every machine', async () => {
    const first = await leader();
    const standby = world.replicas.find((replica) => replica !== first) as ControllerReplica;
    const before = await leaseHolder(cluster());
    await createObject(
      cluster(),
      ROLLOUTS,
      rollout('fleet-v3', {
        releaseRef: { name: 'agent-v3' },
        targets: { selector: SELECTOR },
        state: 'Run',
        strategy: {
          waves: [
            { name: 'canary', count: 2, maxInFlight: 2, failureBudget: 0 },
            { name: 'half', percent: 50, maxInFlight: 3 },
            { name: 'rest', percent: 100, maxInFlight: 3 },
          ],
          operationTimeout: '5m',
          onFailure: 'Halt',
        },
      }),
    );
    const halfStarted = async () => (await childOperations(cluster(), 'fleet-v3')).some((op) => op.wave === 'half');
    expect(await waitFor(halfStarted, 90_000, 200), first.logTail()).toBe(true);
    const killedMs = Date.now();
    await first.kill();
    const takenOver = async () => (await leaseHolder(cluster())).holder === standby.identity;
    expect(await waitFor(takenOver, LEASE_DURATION_MS + 16_000, 100)).toBe(true);
    const takeoverMs = Date.now() - killedMs;
    // The dead leader's last renewal, seen up to a retry period late, runs out after one lease
    // duration; the standby tries once a retry period (1 s). The rest is slack for 2 busy cores.
    expect(takeoverMs).toBeLessThan(LEASE_DURATION_MS + 4_000);
    expect((await leaseHolder(cluster())).transitions).toBe(before.transitions + 1);
    expect(await waitFor(async () => (await standby.leaderGauge()) === 1, 10_000, 200)).toBe(true);
    expect((await rolloutNamed(cluster(), 'fleet-v3')).status?.phase).toBe('Progressing');

    const succeeded = async () => (await phaseOf('fleet-v3')) === 'Succeeded';
    expect(await waitFor(succeeded, 150_000, 500), standby.logTail()).toBe(true);
    const { status } = await rolloutNamed(cluster(), 'fleet-v3');
    const fleet = MACHINES.length;
    expect(status).toMatchObject({
      progress: `${fleet}/${fleet}`,
      counts: { succeeded: fleet, failed: 0, inFlight: 0 },
    });
    const operations = await childOperations(cluster(), 'fleet-v3');
    expect(operations.map((op) => op.machineRef).sort()).toEqual(MACHINES.map((m) => m.name));
    expect(operations.every((op) => op.phase === 'Complete' && op.reason === 'Succeeded')).toBe(true);
    // The new leader created operations too: the rollout went on after the kill.
    const names = new Set(operations.map((op) => op.name));
    const createdAfterKill = operationCreates(await cluster().audit()).filter(
      (create) => names.has(create.name) && create.code === 201 && Date.parse(create.at) > killedMs,
    );
    expect(createdAfterKill.length).toBeGreaterThan(0);
    // The replica that started the rollout is not the one that finished it.
    const events = await eventsAbout(cluster(), 'fleet-v3');
    const recordedBy = (reason: string) =>
      events.filter((event) => event.reason === reason).map((event) => event.instance);
    expect(recordedBy('RolloutProgressing')).toEqual([first.identity]);
    expect(recordedBy('RolloutSucceeded')).toEqual([standby.identity]);
    const versions = await versionsOnceReported(
      MACHINES.map((m) => m.name),
      V3,
    );
    expect(Object.values(versions)).toEqual(MACHINES.map(() => V3));
    for (const machine of MACHINES) expect(await world.fleet.runningDigest(machine.name)).toBe(world.digests[V3]);
  }, 240_000);

  it('no machine ever had two live operations (audited create to first terminal status)', async () => {
    const operations = [
      ...(await childOperations(cluster(), 'fleet-v2')),
      ...(await childOperations(cluster(), 'fleet-v3')),
    ];
    expect(operations.length).toBeGreaterThanOrEqual(MACHINES.length + 4);
    expect(machinesWithOverlappingOperations(await cluster().audit(), operations)).toEqual([]);
  });

  it('kubectl get arl prints Release, Phase, Wave, Progress, In-Flight, Failed and Age from the status', async () => {
    const printed = await cluster().server.kubectl(cluster().server.admin, ['get', 'arl']);
    expect(printed.status, printed.stderr).toBe(0);
    const header = printed.stdout.split('\n')[0]?.trim().split(/\s+/);
    expect(header).toEqual(['NAME', 'RELEASE', 'PHASE', 'WAVE', 'PROGRESS', 'IN-FLIGHT', 'FAILED', 'AGE']);
    const rows = parseTable(printed.stdout);
    expect(rows.map((row) => row['NAME'])).toEqual(['fleet-v2', 'fleet-v3']);
    for (const row of rows) {
      const { spec, status } = await rolloutNamed(cluster(), row['NAME'] ?? '');
      expect(row).toEqual({
        NAME: row['NAME'],
        RELEASE: (spec['releaseRef'] as { name: string }).name,
        PHASE: status?.phase,
        WAVE: status?.currentWave ?? '<none>',
        PROGRESS: status?.progress,
        'IN-FLIGHT': String(status?.counts?.inFlight),
        FAILED: String(status?.counts?.failed),
        AGE: expect.stringMatching(/^\d+(s|m\d*s?)$/),
      });
    }
  });
});
