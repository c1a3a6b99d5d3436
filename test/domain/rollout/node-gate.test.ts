/**
 * The Node gate: a Complete operation counts as succeeded only once its Node is Ready and its
 * kubelet's Lease was renewed after the operation completed; a Node that does not come back, or
 * turns NotReady while its wave bakes, is a NodeNotReady failure against the wave's budget.
 */
import { describe, expect, it } from 'vitest';
import { judgeNode, type NodeGate, type WaveWatch } from '../../../src/domain/fleet/decide/node-verdict.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import type { ChildOperation, LeaseFacts, NodeFacts } from '../../../src/domain/fleet/order/snapshot.js';
import { creates, exampleCluster, finish, later, operationsOf, reconcile, strategy } from './example-cluster.js';
import type { RolloutWorld } from './rollout-world.js';

const MINUTE = 60_000;
const COMPLETED_MS = 1_000_000;
const TIMEOUT_MS = 5 * MINUTE;
const LEASE_MS = 40_000;

const child: ChildOperation = {
  name: 'fleet-0',
  machineRef: 'node-a',
  labels: {},
  ownerUid: 'uid-fleet',
  phase: 'Complete',
  reason: 'Succeeded',
  message: null,
  createdMs: COMPLETED_MS - 2 * MINUTE,
  startedMs: COMPLETED_MS - MINUTE,
  completedMs: COMPLETED_MS,
};

interface Case {
  readonly ready?: NodeFacts['ready'];
  /** Renewed this long after the completion (negative: before), or no Lease at all. */
  readonly renewedAfterMs: number | null;
  readonly watch?: WaveWatch;
  readonly atMs: number;
}

const PROGRESSING: WaveWatch = { completedMs: null, bakeUntilMs: null };
const BAKING: WaveWatch = { completedMs: COMPLETED_MS + MINUTE, bakeUntilMs: COMPLETED_MS + 30 * MINUTE };
const notReady = (sinceMs: number): NodeFacts['ready'] => ({ status: 'False', sinceMs });

function verdict(test: Case): { kind: string; reason?: string; changesAtMs: number | null } {
  const node: NodeFacts = {
    name: 'node-a',
    uid: 'u',
    labels: {},
    annotations: {},
    ...(test.ready && { ready: test.ready }),
  };
  const leases = new Map<string, LeaseFacts>();
  if (test.renewedAfterMs !== null)
    leases.set('node-a', { name: 'node-a', renewMs: COMPLETED_MS + test.renewedAfterMs, durationMs: LEASE_MS });
  const gate: NodeGate = { timeoutMs: TIMEOUT_MS, leases, waves: new Map([['w', test.watch ?? PROGRESSING]]) };
  const { outcome, changesAtMs } = judgeNode(child, node, 'w', gate, COMPLETED_MS + test.atMs);
  return { kind: outcome.kind, ...(outcome.kind === 'failed' && { reason: outcome.reason }), changesAtMs };
}

const SUCCEEDED = { kind: 'succeeded' };
const NODE_NOT_READY = { kind: 'failed', reason: 'NodeNotReady' };
const AWAITING = { kind: 'inFlight' };

describe('judgeNode', () => {
  it('names the next instant at which time alone may change its verdict', () => {
    // Awaiting a renewal, its Lease already run out: the gate's timeout.
    expect(verdict({ renewedAfterMs: -5_000, atMs: LEASE_MS })).toEqual({
      kind: 'inFlight',
      changesAtMs: COMPLETED_MS + TIMEOUT_MS + 1,
    });
    // Proved, while the wave runs: when its Lease would run out.
    expect(verdict({ renewedAfterMs: 5_000, atMs: 6_000 }).changesAtMs).toBe(COMPLETED_MS + 5_000 + LEASE_MS);
    // Once the bake is over, never.
    expect(verdict({ renewedAfterMs: 2 * MINUTE, watch: BAKING, atMs: 60 * MINUTE }).changesAtMs).toBeNull();
  });

  it.each<[string, Case, object]>([
    [
      'renewed after the upgrade, Ready',
      { renewedAfterMs: 5_000, ready: { status: 'True', sinceMs: 0 }, atMs: 6_000 },
      { ...SUCCEEDED, changesAtMs: COMPLETED_MS + 5_000 + LEASE_MS },
    ],
    ['a Lease last renewed before the upgrade is waited for', { renewedAfterMs: -5_000, atMs: 20_000 }, AWAITING],
    ['…until the timeout', { renewedAfterMs: -5_000, atMs: TIMEOUT_MS + 1 }, NODE_NOT_READY],
    [
      'Ready False after a renewal is waited for too',
      { renewedAfterMs: 5_000, ready: notReady(COMPLETED_MS), atMs: 6_000 },
      AWAITING,
    ],
    ['a Lease that ran out, past the timeout', { renewedAfterMs: 5_000, atMs: TIMEOUT_MS + 1 }, NODE_NOT_READY],
    ['no Lease and no Ready condition: judged on what it has', { renewedAfterMs: null, atMs: 1 }, SUCCEEDED],
    [
      'no Lease, Ready Unknown',
      { renewedAfterMs: null, ready: { status: 'Unknown', sinceMs: null }, atMs: TIMEOUT_MS + 1 },
      NODE_NOT_READY,
    ],
  ])('while the wave runs: %s', (_name, test, expected) => {
    expect(verdict(test)).toMatchObject(expected);
  });

  it.each<[string, Case, object]>([
    [
      'Ready and renewed: succeeded until the bake ends',
      { renewedAfterMs: 10 * MINUTE, watch: BAKING, atMs: 10 * MINUTE + 1 },
      SUCCEEDED,
    ],
    [
      'turned NotReady: failed at once',
      { renewedAfterMs: 10 * MINUTE, ready: notReady(COMPLETED_MS + 9 * MINUTE), watch: BAKING, atMs: 10 * MINUTE },
      NODE_NOT_READY,
    ],
    [
      'its Lease ran out: failed at once',
      { renewedAfterMs: 2 * MINUTE, watch: BAKING, atMs: 10 * MINUTE },
      NODE_NOT_READY,
    ],
  ])('while the wave bakes: %s', (_name, test, expected) => {
    expect(verdict(test)).toMatchObject(expected);
  });

  it.each<[string, Case, object]>([
    [
      'NotReady since before the bake ended, still',
      { renewedAfterMs: 60 * MINUTE, ready: notReady(COMPLETED_MS + 20 * MINUTE), watch: BAKING, atMs: 60 * MINUTE },
      NODE_NOT_READY,
    ],
    [
      'NotReady only since after the bake: not the rollout’s business',
      { renewedAfterMs: 60 * MINUTE, ready: notReady(COMPLETED_MS + 40 * MINUTE), watch: BAKING, atMs: 60 * MINUTE },
      SUCCEEDED,
    ],
    [
      'its Lease ran out before the bake ended and was never renewed again',
      { renewedAfterMs: 2 * MINUTE, watch: BAKING, atMs: 60 * MINUTE },
      NODE_NOT_READY,
    ],
    [
      'its Lease ran out, and the node came back since',
      { renewedAfterMs: 59 * MINUTE, watch: BAKING, atMs: 60 * MINUTE },
      SUCCEEDED,
    ],
  ])('once the bake is over: %s', (_name, test, expected) => {
    expect(verdict(test)).toMatchObject(expected);
  });
});

/** Every Node's kubelet renewed its Lease at this instant (as a kubelet does every ten seconds). */
function renewAll(world: RolloutWorld, durationMs = LEASE_MS): void {
  world.leases = new Map([...world.nodes.keys()].map((name) => [name, { name, renewMs: world.nowMs, durationMs }]));
}

function gatedCluster(canary: Record<string, unknown> = {}): RolloutWorld {
  const world = exampleCluster(
    8,
    strategy({
      waves: [
        { name: 'canary', count: 2, maxInFlight: 2, failureBudget: 0, ...canary },
        { name: 'rest', percent: 100, maxInFlight: 6 },
      ],
      nodeReadiness: { timeout: '5m' },
    }),
  );
  renewAll(world);
  return world;
}

/** A plan of the world's memo equals a plan without one (planner-memo.ts). */
function reconcileChecked(world: RolloutWorld): ReturnType<typeof reconcile> {
  const fresh = planRollout(world.snapshot(), world.nowMs);
  const plan = reconcile(world);
  expect(plan).toEqual(fresh);
  return plan;
}

describe('the Node gate in the planner', () => {
  it('holds a Complete machine in flight until its Lease renews, then counts it; a Node that never does fails NodeNotReady and halts the canary', () => {
    const world = gatedCluster();
    expect(creates(reconcileChecked(world))).toHaveLength(2);
    later(world);
    for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
    later(world);
    const waiting = reconcileChecked(world);
    expect(waiting.status.counts).toMatchObject({ inFlight: 2, succeeded: 0, failed: 0 });
    expect(waiting.status.waves[0]?.phase).toBe('Progressing');
    expect(waiting.requeueAfterMs).toBeLessThanOrEqual(5 * MINUTE);
    const [first, second] = operationsOf(world, 'canary');
    world.leases?.set(first!.machineRef, { name: first!.machineRef, renewMs: world.nowMs, durationMs: LEASE_MS });
    expect(reconcileChecked(world).status.counts).toMatchObject({ inFlight: 1, succeeded: 1 });
    // The first node's kubelet goes on renewing; the second's never renews again.
    later(world, 5 * MINUTE);
    world.leases?.set(first!.machineRef, { name: first!.machineRef, renewMs: world.nowMs, durationMs: LEASE_MS });
    const halted = reconcileChecked(world);
    expect(halted.status.phase).toBe('Halted');
    expect(halted.status.halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary' });
    expect(halted.status.failures.byReason).toEqual({ NodeNotReady: 1 });
    expect(halted.status.failures.sample.map((sample) => sample.machine)).toEqual([second!.machineRef]);
    expect(halted.status.counts).toMatchObject({ succeeded: 1, failed: 1, inFlight: 0 });
  });

  it('a Node that turns NotReady while its wave bakes fails at once', () => {
    const world = gatedCluster({ bake: '30m' });
    reconcileChecked(world);
    later(world);
    for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
    later(world);
    renewAll(world);
    expect(reconcileChecked(world).status.phase).toBe('Baking');
    later(world, 10 * MINUTE);
    renewAll(world);
    const [op] = operationsOf(world, 'canary');
    const node = world.nodes.get(op!.machineRef)!;
    world.nodes.set(node.name, { ...node, ready: { status: 'False', sinceMs: world.nowMs } });
    const halted = reconcileChecked(world);
    expect(halted.status.halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary' });
    expect(halted.status.failures.byReason).toEqual({ NodeNotReady: 1 });
  });

  it('with the gate turned off, Complete is enough', () => {
    const world = exampleCluster(8, strategy({ nodeReadiness: { enabled: false } }));
    renewAll(world);
    reconcileChecked(world);
    later(world);
    for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
    later(world);
    expect(reconcileChecked(world).status.counts).toMatchObject({ succeeded: 2, failed: 0 });
  });
});
