/**
 * The Node gate on a real kube-apiserver: four machines with real daemons and one real controller
 * (the shipped CRDs and RBAC), and a simulated kubelet per Node keeping its Ready condition and
 * renewing its Lease in kube-node-lease. A machine whose kubelet stopped renewing is not counted
 * succeeded when its operation completes, and fails NodeNotReady once the gate's timeout passes;
 * a Node that turns NotReady while its wave bakes fails at once and halts the rollout. And a wave
 * whose analysis cannot reach its Prometheus halts with AnalysisFailed: the shipped CRD takes the
 * analysis and its status on a real server (test/prometheus runs analyses against a real
 * Prometheus). Read from the objects only: phases, counts and reasons.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childOperations, createObject, rolloutNamed, ROLLOUTS } from '../support/kube/rollout-evidence.js';
import type { MachineSpec } from '../support/kube/rollout-fleet.js';
import { startRolloutWorld, type RolloutWorld } from '../support/kube/rollout-world.js';
import { waitFor } from '../support/wait-for.js';
import { SimulatedKubelets } from './simulated-kubelets.js';

const MACHINES: MachineSpec[] = Array.from({ length: 4 }, (_, i) => ({
  name: `gate-${i}`,
  arch: i === 3 ? 'arm64' : 'amd64',
  zone: ['zone-a', 'zone-b'][i % 2] as string,
}));
const SELECTOR = { matchLabels: { 'node-role.kubernetes.io/agent': '' } };
const SILENT = 'gate-2';

let world: RolloutWorld;
let kubelets: SimulatedKubelets;

function rollout(name: string, release: string, waves: object[], analysis?: object): object {
  return {
    apiVersion: 'agent-upgrade.dev/v1alpha1',
    kind: 'AgentRollout',
    metadata: { name },
    spec: {
      releaseRef: { name: release },
      targets: { selector: SELECTOR },
      state: 'Run',
      strategy: {
        waves,
        operationTimeout: '5m',
        onFailure: 'Halt',
        nodeReadiness: { timeout: '20s' },
        ...(analysis !== undefined && { analysis }),
      },
    },
  };
}

beforeAll(async () => {
  world = await startRolloutWorld(
    MACHINES,
    [
      { name: 'agent-v1', version: '1.0.0' },
      { name: 'agent-v2', version: '2.0.0' },
      { name: 'agent-v3', version: '3.0.0' },
      { name: 'agent-v4', version: '4.0.0' },
    ],
    { replicas: ['a'] },
  );
  kubelets = await SimulatedKubelets.start(
    world.cluster,
    MACHINES.map((machine) => machine.name),
  );
}, 300_000);

afterAll(async () => {
  await kubelets?.close();
  await world?.stop();
}, 90_000);

describe('the Node gate on a real API server', () => {
  it('a machine whose kubelet stopped renewing its Lease is not counted succeeded, then fails NodeNotReady', async () => {
    kubelets.stop(SILENT);
    await createObject(
      world.cluster,
      ROLLOUTS,
      rollout('gate-v2', 'agent-v2', [{ name: 'all', percent: 100, maxInFlight: 4, failureBudget: 1 }]),
    );
    const cluster = world.cluster;
    const completed = async () => {
      const operations = await childOperations(cluster, 'gate-v2');
      return operations.length === MACHINES.length && operations.every((op) => op.phase === 'Complete');
    };
    expect(await waitFor(completed, 150_000, 500), world.replicas[0]?.logTail()).toBe(true);
    // Every operation reported Complete; three Nodes proved themselves, the silent one is waited for.
    const waiting = async () => {
      const counts = (await rolloutNamed(cluster, 'gate-v2')).status?.counts;
      return counts?.succeeded === 3 && counts.inFlight === 1;
    };
    expect(await waitFor(waiting, 15_000, 250)).toBe(true);

    const ended = async () => (await rolloutNamed(cluster, 'gate-v2')).status?.phase === 'Succeeded';
    expect(await waitFor(ended, 60_000, 500), world.replicas[0]?.logTail()).toBe(true);
    const { status } = await rolloutNamed(cluster, 'gate-v2');
    expect(status?.counts).toMatchObject({ succeeded: 3, failed: 1, inFlight: 0 });
    expect(status?.failures?.byReason).toEqual({ NodeNotReady: 1 });
    const sample = (status as { failures?: { sample?: { machine: string; reason: string }[] } }).failures?.sample;
    expect(sample?.map((entry) => [entry.machine, entry.reason])).toEqual([[SILENT, 'NodeNotReady']]);
  }, 240_000);

  it('a Node that turns NotReady while its canary bakes fails at once and halts the rollout', async () => {
    kubelets.resume(SILENT);
    await createObject(
      world.cluster,
      ROLLOUTS,
      rollout('gate-v3', 'agent-v3', [
        { name: 'canary', count: 1, maxInFlight: 1, failureBudget: 0, bake: '10m' },
        { name: 'rest', percent: 100, maxInFlight: 4 },
      ]),
    );
    const cluster = world.cluster;
    const baking = async () => (await rolloutNamed(cluster, 'gate-v3')).status?.phase === 'Baking';
    expect(await waitFor(baking, 150_000, 500), world.replicas[0]?.logTail()).toBe(true);
    const [canary] = await childOperations(cluster, 'gate-v3');
    expect(canary?.phase).toBe('Complete');
    await kubelets.setReady(canary?.machineRef ?? '', 'False');

    const halted = async () => (await rolloutNamed(cluster, 'gate-v3')).status?.phase === 'Halted';
    expect(await waitFor(halted, 30_000, 250), world.replicas[0]?.logTail()).toBe(true);
    const { status } = await rolloutNamed(cluster, 'gate-v3');
    expect(status?.halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary' });
    expect(status?.failures?.byReason).toEqual({ NodeNotReady: 1 });
    expect((await childOperations(cluster, 'gate-v3')).map((op) => op.wave)).toEqual(['canary']);
  }, 240_000);

  it('a wave whose analysis cannot reach its Prometheus halts with AnalysisFailed', async () => {
    for (const machine of MACHINES) await kubelets.setReady(machine.name, 'True');
    const analysis = {
      metrics: [
        {
          name: 'error-ratio',
          // Port 1 on loopback: nothing listens there, so every measurement is an error.
          prometheus: { address: 'http://127.0.0.1:1', query: 'sum(agent_errors)' },
          successCondition: 'result[0] < 0.01',
          interval: '2s',
          consecutiveErrorLimit: 1,
        },
      ],
    };
    await createObject(
      world.cluster,
      ROLLOUTS,
      rollout(
        'gate-v4',
        'agent-v4',
        [
          { name: 'canary', count: 1, maxInFlight: 1, failureBudget: 0 },
          { name: 'rest', percent: 100, maxInFlight: 4 },
        ],
        analysis,
      ),
    );
    const cluster = world.cluster;
    const halted = async () => (await rolloutNamed(cluster, 'gate-v4')).status?.phase === 'Halted';
    expect(await waitFor(halted, 150_000, 500), world.replicas[0]?.logTail()).toBe(true);
    const { status } = await rolloutNamed(cluster, 'gate-v4');
    expect(status?.halt).toMatchObject({ reason: 'AnalysisFailed', wave: 'canary' });
    const analysed = (status as { waves?: { analysis?: { metrics: object[] } }[] } | undefined)?.waves?.[0]?.analysis;
    expect(analysed?.metrics).toMatchObject([
      { name: 'error-ratio', phase: 'Failed', errors: 2, consecutiveErrors: 2 },
    ]);
    expect((await childOperations(cluster, 'gate-v4')).map((op) => op.wave)).toEqual(['canary']);
  }, 240_000);
});
