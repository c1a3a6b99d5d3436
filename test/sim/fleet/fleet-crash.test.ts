/**
 * 100 controller crashes at random effects (a status update, a create, an Event; each killed
 * just before the request or just after its answer, and restarted at once, as its Deployment
 * would) end in the state of the same run uninterrupted: a release that fails on one instance
 * type within its budgets, so every machine gets exactly one operation and its outcome is its
 * own; then the same operations with the same outcomes, the same versions, the same counts.
 * The crashes run on 2,000 machines: a restart relists and plans from the snapshot whatever the
 * fleet's size, and 2,000 already fills the largest create batch (500) in its later waves. The
 * same rollout uninterrupted on 10,000 machines shows the numbers that grow with the fleet:
 * writes per machine, reads served from watches, the status size, every machine counted once —
 * with kubelets renewing their Nodes' Leases after each upgrade, except on one machine in 500
 * whose kubelet never renews again and one in 500 whose kubelet renews once and dies: those are
 * NodeNotReady failures, never succeeded (the Node gate, src/domain/fleet/decide/node-verdict.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASHES, crashPlan, runWithAndWithoutCrashes, type CrashScenario } from './fleet-crash-support.js';
import { runFleet, type RunPlan, type RunResult } from './fleet-run.js';
import { controllerReads, writesPerMachine } from './fleet-measures.js';
import type { Kubelet } from './fleet-daemons.js';
import { endState, printReplayOnFailure, PROPERTY_SIZE, report, RUN_TIMEOUT_MS, SEED, SIZE } from './fleet-support.js';

printReplayOnFailure();

// One machine in thirty fails; budgets of 10% let every wave through.
const SCENARIO: CrashScenario = { failures: 'instance-type', onFailure: 'Halt', budget: '10%' };

let runs: { uninterrupted: RunResult; crashed: RunResult; effects: number };
/** The same rollout on the full fleet, uninterrupted: the numbers that grow with it. */
let atScale: RunResult;

/**
 * Kubelets renew after each upgrade, but one in 500 never does again and one in 500 dies after its
 * first renewal; the gate waits two minutes for a Node (the default ten would only stretch the
 * run's virtual time, and with it the instants simulated).
 */
function withKubelets(plan: RunPlan): RunPlan {
  const kubeletOf = (index: number): Kubelet =>
    index % 500 === 7 ? 'silent' : index % 500 === 257 ? 'dies' : 'renews';
  const [rollout] = plan.rollouts as [RunPlan['rollouts'][number]];
  const strategy = { ...(rollout.spec['strategy'] as object), nodeReadiness: { timeout: '2m' } };
  return {
    ...plan,
    kubelets: true,
    machines: plan.machines.map((machine, index) => ({ ...machine, kubelet: kubeletOf(index) })),
    rollouts: [{ ...rollout, spec: { ...rollout.spec, strategy } }],
  };
}

beforeAll(async () => {
  atScale = await runFleet(withKubelets(crashPlan(SCENARIO, SIZE)));
  report(atScale, `${SCENARIO.onFailure}, uninterrupted`);
  runs = await runWithAndWithoutCrashes(SCENARIO, PROPERTY_SIZE);
}, 3 * RUN_TIMEOUT_MS);

afterAll(async () => {
  await atScale?.world.close();
  await runs?.uninterrupted.world.close();
  await runs?.crashed.world.close();
});

describe(`${CRASHES} controller crashes on ${PROPERTY_SIZE} simulated machines (seed ${SEED})`, () => {
  it('every planned crash happened', () => {
    expect(runs.effects).toBeGreaterThan(CRASHES);
    expect(runs.crashed.world.restarts).toBe(CRASHES);
  });

  it('end in exactly the state of the uninterrupted run', () => {
    expect(runs.crashed.statuses.get('fleet')?.['phase']).toBe('Succeeded');
    expect(endState(runs.crashed)).toEqual(endState(runs.uninterrupted));
  });

  it('never exceeded a cap or gave a machine two live operations, crashes and all', () => {
    expect(runs.crashed.monitor.violations).toEqual([]);
    expect(runs.uninterrupted.monitor.violations).toEqual([]);
  });
});

describe(`the same rollout on ${SIZE} simulated machines, uninterrupted (seed ${SEED})`, () => {
  it('cost each machine at most 4 writes: 1 create, 2 status writes, 1 version report', () => {
    const writes = writesPerMachine(atScale);
    console.log(
      `writes per machine: max ${writes.maxPerMachine}, mean ${writes.meanPerMachine.toFixed(2)}, ${JSON.stringify(writes.byKind)}`,
    );
    expect(writes.maxPerMachine).toBeLessThanOrEqual(4);
    expect(writes.byKind.create).toBe(SIZE);
  });

  it('counted every target machine exactly once, in one class', () => {
    const counts = atScale.statuses.get('fleet')?.['counts'] as Record<string, number> & {
      excluded: Record<string, number>;
    };
    const { targets, excluded, ...classes } = counts;
    const counted = [...Object.values(classes), ...Object.values(excluded)].reduce((sum, count) => sum + count, 0);
    expect({ targets, counted, pending: classes['pending'], inFlight: classes['inFlight'] }).toEqual({
      targets: SIZE,
      counted: SIZE,
      pending: 0,
      inFlight: 0,
    });
  });

  it('read only through lists and watches, and kept the status under 64 KiB', () => {
    const reads = controllerReads(atScale);
    console.log(`controller reads ${JSON.stringify(reads.informed)}`);
    expect(reads.informed['get'] ?? 0).toBe(0);
    expect(reads.informed['watch']).toBeGreaterThan(0);
    expect(atScale.monitor.records.get('fleet')?.maxStatusBytes).toBeLessThan(64 * 1024);
  });

  it('never exceeded a cap or gave a machine two live operations', () => {
    expect(atScale.statuses.get('fleet')?.['phase']).toBe('Succeeded');
    expect(atScale.monitor.violations).toEqual([]);
  });

  it('counted every machine whose kubelet stopped renewing its Lease as NodeNotReady, never as succeeded', () => {
    const status = atScale.statuses.get('fleet') as {
      counts: { succeeded: number };
      failures: { byReason: Record<string, number> };
    };
    const complete = [...atScale.monitor.children.values()].filter((child) => child.phase === 'Complete');
    const stopped = complete.filter((child) => atScale.world.machines.get(child.machine)?.kubelet !== 'renews');
    console.log(`${stopped.length} of ${complete.length} completed machines had a kubelet that stopped`);
    expect(stopped.length).toBeGreaterThan(SIZE / 500);
    expect(status.failures.byReason['NodeNotReady']).toBe(stopped.length);
    expect(status.counts.succeeded).toBe(complete.length - stopped.length);
  });
});
