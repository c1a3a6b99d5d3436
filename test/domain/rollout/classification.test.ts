/** One example per class a machine or its operation can be in. */
import { describe, expect, it } from 'vitest';
import { classifyChild } from '../../../src/domain/fleet/decide/classify-child.js';
import type { ChildOperation } from '../../../src/domain/fleet/order/snapshot.js';
import {
  ANNOTATION_AGENT_VERSION,
  LABEL_ARCH,
  LABEL_OPT_OUT,
} from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import {
  creates,
  eventReasons,
  exampleCluster,
  finish,
  later,
  operationsOf,
  reconcile,
  start,
  strategy,
} from './example-cluster.js';

const MINUTE = 60_000;

function child(overrides: Partial<ChildOperation>): ChildOperation {
  return {
    name: 'op',
    machineRef: 'node-000',
    labels: {},
    ownerUid: 'uid',
    phase: null,
    reason: null,
    message: null,
    createdMs: 0,
    startedMs: null,
    completedMs: null,
    ...overrides,
  };
}

describe('classifyChild', () => {
  const timeoutMs = 10 * MINUTE;
  it('reads Complete as succeeded', () => {
    expect(classifyChild(child({ phase: 'Complete', reason: 'Succeeded' }), timeoutMs, MINUTE)).toEqual({
      kind: 'succeeded',
    });
  });
  it('reads DaemonFailed, ExecutionFailed and Untrusted as failures that left the machine usable', () => {
    for (const reason of ['DaemonFailed', 'ExecutionFailed', 'Untrusted']) {
      expect(classifyChild(child({ phase: 'Failed', reason, completedMs: 5 }), timeoutMs, MINUTE)).toEqual({
        kind: 'failed',
        reason,
        atMs: 5,
        usable: true,
      });
    }
  });
  it('reads any other failure as leaving the machine in an unknown state', () => {
    expect(classifyChild(child({ phase: 'Failed', reason: 'Crashed' }), timeoutMs, MINUTE)).toMatchObject({
      usable: false,
    });
    expect(classifyChild(child({ phase: 'Failed', reason: 'not an identifier!' }), timeoutMs, MINUTE)).toMatchObject({
      reason: 'Unknown',
    });
  });
  it('reads MachineNotFound as a vanished machine, not a failure', () => {
    expect(classifyChild(child({ phase: 'Failed', reason: 'MachineNotFound' }), timeoutMs, MINUTE)).toEqual({
      kind: 'vanished',
    });
  });
  it('times out InProgress from its start and Pending from its creation, telling them apart', () => {
    const running = child({ phase: 'InProgress', createdMs: 0, startedMs: 5 * MINUTE });
    expect(classifyChild(running, timeoutMs, 14 * MINUTE)).toEqual({ kind: 'inFlight' });
    expect(classifyChild(running, timeoutMs, 16 * MINUTE)).toEqual({
      kind: 'timedOut',
      reason: 'TimedOut',
      atMs: 15 * MINUTE,
    });
    expect(classifyChild(child({ phase: null }), timeoutMs, 11 * MINUTE)).toEqual({
      kind: 'timedOut',
      reason: 'NotStarted',
      atMs: 10 * MINUTE,
    });
  });
});

describe('machines in the plan', () => {
  it('counts a Complete operation as succeeded and never dispatches it again', () => {
    const world = exampleCluster(8);
    const first = creates(reconcile(world));
    expect(first).toHaveLength(2);
    for (const op of operationsOf(world)) finish(world, op, 'Succeeded');
    later(world);
    const plan = reconcile(world);
    expect(plan.status.counts.succeeded).toBe(2);
    expect(creates(plan).map((op) => op.spec.machineRef)).not.toEqual(
      expect.arrayContaining(first.map((op) => op.spec.machineRef)),
    );
  });

  it('counts DaemonFailed against the budget and halts when the budget is exceeded', () => {
    const world = exampleCluster(
      8,
      strategy({
        waves: [
          { name: 'canary', count: 2, maxInFlight: 2, failureBudget: 1 },
          { name: 'rest', percent: 100 },
        ],
      }),
    );
    reconcile(world);
    const [a, b] = operationsOf(world);
    finish(world, a!, 'DaemonFailed');
    later(world);
    expect(reconcile(world).status.phase).toBe('Progressing');
    finish(world, b!, 'ExecutionFailed');
    later(world);
    const plan = reconcile(world);
    expect(plan.status.phase).toBe('Halted');
    expect(plan.status.halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary' });
    expect(plan.status.failures.byReason).toEqual({ DaemonFailed: 1, ExecutionFailed: 1 });
    expect(plan.status.waves[0]?.failureBudget).toEqual({ allowed: 1, used: 2 });
  });

  /** A canary wave with room for five failures, whose first operation ends with `reason`. */
  function oneFailureInCanary(reason: string) {
    const world = exampleCluster(
      8,
      strategy({
        waves: [
          { name: 'canary', count: 2, maxInFlight: 2, failureBudget: 5 },
          { name: 'rest', percent: 100 },
        ],
      }),
    );
    reconcile(world);
    finish(world, operationsOf(world)[0]!, reason);
    later(world);
    return reconcile(world);
  }

  it('halts at once on InvalidParameters whatever the budget, without quarantining the release', () => {
    const plan = oneFailureInCanary('InvalidParameters');
    expect(plan.status.halt?.reason).toBe('InvalidParameters');
    expect(plan.status.halt?.quarantine).toBeUndefined();
    expect(plan.actions.some((action) => action.kind === 'QuarantineRelease')).toBe(false);
    expect(creates(plan)).toEqual([]);
  });

  it('halts at once on Untrusted whatever the budget: a release the publisher did not sign', () => {
    const plan = oneFailureInCanary('Untrusted');
    expect(plan.status).toMatchObject({ phase: 'Halted', halt: { reason: 'Untrusted', wave: 'canary' } });
    expect(creates(plan)).toEqual([]);
  });

  it('counts an operation InProgress past operationTimeout as timed out, keeps its slot and never re-dispatches it', () => {
    const world = exampleCluster(
      8,
      strategy({
        waves: [
          { name: 'canary', count: 2, failureBudget: 1, maxInFlight: 2 },
          { name: 'rest', percent: 100 },
        ],
      }),
    );
    reconcile(world);
    const [hung, ok] = operationsOf(world);
    start(world, hung!);
    finish(world, ok!, 'Succeeded');
    later(world, 11 * MINUTE);
    const plan = reconcile(world);
    expect(plan.status.counts.timedOut).toBe(1);
    expect(plan.status.failures.byReason).toEqual({ TimedOut: 1 });
    expect(plan.status.waves[0]?.failureBudget.used).toBe(1);
    // The canary is done (the hung one is charged), the next wave starts beside it.
    expect(creates(plan).every((op) => op.spec.machineRef !== hung!.machineRef)).toBe(true);
  });

  it('does not charge the budget for an operation no daemon picked up, but reports it', () => {
    const world = exampleCluster(8);
    reconcile(world);
    later(world, 11 * MINUTE);
    const plan = reconcile(world);
    expect(plan.status.counts.timedOut).toBe(2);
    expect(plan.status.failures.byReason).toEqual({ NotStarted: 2 });
    expect(plan.status.waves[0]?.failureBudget.used).toBe(0);
    expect(plan.status.phase).toBe('Progressing');
  });

  it('removes a vanished machine from the denominators instead of failing it', () => {
    const world = exampleCluster(8);
    reconcile(world);
    const [gone, other] = operationsOf(world);
    world.nodes.delete(gone!.machineRef);
    finish(world, other!, 'MachineNotFound');
    later(world);
    const plan = reconcile(world);
    expect(plan.status.counts.excluded.vanished).toBe(2);
    expect(plan.status.counts.failed).toBe(0);
    expect(plan.status.counts.targets).toBe(7);
    expect(plan.status.progress).toBe('0/7');
    expect(eventReasons(plan)).toContain('MachinesVanished');
  });

  it('treats an operation deleted by hand as lost: an event, and never recreated', () => {
    const world = exampleCluster(8);
    reconcile(world);
    later(world);
    // Observed once: the announcement is settled, the operations exist.
    expect(reconcile(world).status.waves[0]?.pendingCreates).toEqual([]);
    const [deleted, kept] = operationsOf(world);
    world.operations.delete(deleted!.name);
    finish(world, kept!, 'Succeeded');
    later(world);
    const plan = reconcile(world);
    expect(plan.status.counts.lost).toBe(1);
    expect(eventReasons(plan)).toContain('OperationsLost');
    for (let round = 0; round < 20; round += 1) {
      for (const op of operationsOf(world)) if (op.phase === null) finish(world, op, 'Succeeded');
      later(world);
      expect(creates(reconcile(world)).map((op) => op.spec.machineRef)).not.toContain(deleted!.machineRef);
    }
    expect(world.rolloutStatus()?.phase).toBe('Succeeded');
    expect(world.rolloutStatus()?.counts).toMatchObject({ succeeded: 7, lost: 1 });
  });

  it('leaves a machine with another live operation alone (conflict) and takes it once that one is done', () => {
    const world = exampleCluster(4, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 4 }] }));
    world.foreign.push({ name: 'by-hand', machineRef: 'node-001', phase: 'InProgress' });
    const plan = reconcile(world);
    expect(plan.status.counts.excluded.conflict).toBe(1);
    expect(creates(plan).map((op) => op.spec.machineRef)).not.toContain('node-001');
    world.foreign[0]!.phase = 'Complete';
    later(world);
    expect(creates(reconcile(world)).map((op) => op.spec.machineRef)).toEqual(['node-001']);
  });

  it('skips machines already at the target version, opted out, or without an artifact', () => {
    const world = exampleCluster(6, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 6 }] }));
    const edit = (name: string, change: (node: ReturnType<typeof world.nodes.get> & object) => object): void => {
      const node = world.nodes.get(name)!;
      world.nodes.set(name, { ...node, ...change(node) });
    };
    edit('node-000', (node) => ({ annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: 'v1.4.2' } }));
    edit('node-001', (node) => ({ labels: { ...node.labels, [LABEL_OPT_OUT]: 'true' } }));
    edit('node-002', (node) => ({ labels: { ...node.labels, [LABEL_ARCH]: 's390x' } }));
    const plan = reconcile(world);
    expect(plan.status.counts.excluded).toMatchObject({ alreadyAtTarget: 1, optedOut: 1, noArtifact: 1 });
    expect(
      creates(plan)
        .map((op) => op.spec.machineRef)
        .sort(),
    ).toEqual(['node-003', 'node-004', 'node-005']);
    expect(plan.status.conditions.find((c) => c.type === 'ArtifactsCoverTargets')).toMatchObject({
      status: 'False',
      reason: 'NoArtifact',
    });
  });

  it('gives each operation the artifact of its node architecture', () => {
    const world = exampleCluster(8, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 8 }] }));
    for (const op of creates(reconcile(world))) {
      const arch = world.nodes.get(op.spec.machineRef)?.labels[LABEL_ARCH];
      expect(op.spec.parameters.downloadURL).toContain(`agent-${arch}.tar.gz`);
      expect(op.spec.parameters.sha256).toBe((arch === 'amd64' ? 'a' : 'b').repeat(64));
    }
  });
});
