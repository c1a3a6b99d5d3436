/** Fleet rollback: who is rolled back, with what, under which budget, and how it ends. */
import { describe, expect, it } from 'vitest';
import {
  creates,
  exampleCluster,
  finish,
  later,
  live,
  operationsOf,
  reconcile,
  settle,
  strategy,
} from './example-cluster.js';

const waves = (onFailure: string, extra: Record<string, unknown> = {}) =>
  strategy({
    onFailure,
    waves: [
      { name: 'canary', count: 2, maxInFlight: 2 },
      { name: 'early', percent: 50, maxInFlight: 4, failureBudget: 0 },
      { name: 'rest', percent: 100, maxInFlight: 4 },
    ],
    ...extra,
  });

/** Runs the canary to success, then fails one machine of the next wave while the others complete. */
function haltInEarlyWave(onFailure: string) {
  const world = exampleCluster(12, waves(onFailure));
  reconcile(world);
  for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
  later(world);
  reconcile(world);
  const early = operationsOf(world, 'early');
  expect(early).toHaveLength(4);
  finish(world, early[0]!, 'DaemonFailed');
  for (const op of early.slice(1)) finish(world, op, 'Succeeded');
  later(world);
  return { world, plan: reconcile(world), early };
}

describe('fleet rollback', () => {
  it('RollBackWave rolls back the halted wave machines that completed, with the rollback release', () => {
    const { world, plan, early } = haltInEarlyWave('RollBackWave');
    expect(plan.status.phase).toBe('RollingBack');
    expect(plan.status.rollback).toMatchObject({ scope: 'Wave', wave: 'early', size: 3 });
    const rollbacks = creates(plan);
    // The DaemonFailed machine is already back on last-good; the canaries are not in scope.
    // rollback.maxInFlight is 50% of 3: two at a time.
    const completed = early.slice(1).map((op) => op.machineRef);
    expect(rollbacks).toHaveLength(2);
    expect(completed).toEqual(expect.arrayContaining(rollbacks.map((op) => op.spec.machineRef)));
    for (const op of rollbacks) {
      expect(op.metadata.name).toMatch(/^fleet-rb-[0-9a-f]{12}$/);
      expect(op.metadata.labels['agent-upgrade.dev/purpose']).toBe('rollback');
      expect(op.spec.parameters.downloadURL).toContain('/agent/1.4.1/');
    }
    const done = settle(world);
    expect(done.status.phase).toBe('RolledBack');
    expect(done.status.counts).toMatchObject({ rolledBack: 3, succeeded: 2, failed: 1 });
    expect(done.status.rollback).toMatchObject({ phase: 'Completed', rolledBack: 3 });
  });

  it('RollBackAll rolls back every machine the rollout upgraded', () => {
    const { world } = haltInEarlyWave('RollBackAll');
    const done = settle(world);
    expect(done.status.phase).toBe('RolledBack');
    expect(done.status.counts).toMatchObject({ rolledBack: 5, succeeded: 0, failed: 1 });
    expect(operationsOf(world, 'rest')).toEqual([]);
    // The wave the halt stopped stays Halted through the rollback and after it.
    expect(done.status.waves.map((wave) => wave.phase)).toEqual(['Completed', 'Halted', 'Pending']);
  });

  it('a rollout that ended stays as it ended while others act on its machines; rolling it back still works', () => {
    const world = exampleCluster(8, waves('Halt'));
    const ended = settle(world).status;
    expect(ended.phase).toBe('Succeeded');
    // Another rollout's operation on one of its machines: a conflict, had it anything left to do.
    world.foreign.push({ name: 'other-rollout-op', machineRef: 'node-003', phase: 'InProgress' });
    later(world);
    const plan = reconcile(world);
    expect(plan.actions).toEqual([]);
    expect(plan.status).toEqual(ended);
    world.foreign.length = 0;
    world.spec = { ...world.spec, state: 'RollBack' };
    later(world);
    expect(reconcile(world).status.phase).toBe('RollingBack');
  });

  it('state RollBack widens a wave rollback to every machine', () => {
    const { world } = haltInEarlyWave('RollBackWave');
    world.spec = { ...world.spec, state: 'RollBack' };
    later(world);
    const plan = reconcile(world);
    expect(plan.status.rollback).toMatchObject({ scope: 'All', size: 5 });
    expect(plan.status.rollback).not.toHaveProperty('wave');
    expect(settle(world).status.counts).toMatchObject({ rolledBack: 5, succeeded: 0 });
  });

  it('Halt keeps every machine where it is', () => {
    const { world, plan } = haltInEarlyWave('Halt');
    expect(plan.status.phase).toBe('Halted');
    expect(operationsOf(world, undefined, 'rollback')).toEqual([]);
  });

  it('waits for forward operations still running: they may complete and need rolling back too', () => {
    const world = exampleCluster(12, waves('RollBackWave'));
    reconcile(world);
    for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
    later(world);
    reconcile(world);
    const early = operationsOf(world, 'early');
    finish(world, early[0]!, 'DaemonFailed');
    later(world);
    expect(reconcile(world).status.phase).toBe('RollingBack');
    for (const op of early.slice(1)) finish(world, op, 'Succeeded');
    later(world);
    expect(creates(reconcile(world))).toHaveLength(2);
    expect(settle(world).status.rollback).toMatchObject({ phase: 'Completed', rolledBack: 3 });
  });

  it('state RollBack undoes a rollout that succeeded', () => {
    const world = exampleCluster(8, waves('Halt'));
    expect(settle(world).status.phase).toBe('Succeeded');
    world.spec = { ...world.spec, state: 'RollBack' };
    later(world);
    const plan = reconcile(world);
    expect(plan.status.phase).toBe('RollingBack');
    expect(plan.status.rollback).toMatchObject({ scope: 'All', size: 8 });
    expect(settle(world).status).toMatchObject({ phase: 'RolledBack', counts: { rolledBack: 8 } });
  });

  it('fails the rollout when the rollback exceeds its own budget, and creates nothing more', () => {
    const world = exampleCluster(8, waves('Halt'));
    settle(world);
    world.spec = {
      ...world.spec,
      state: 'RollBack',
      rollback: { releaseRef: { name: 'agent-1.4.1' }, maxInFlight: 2, failureBudget: 1 },
    };
    later(world);
    reconcile(world);
    for (const op of live(world)) finish(world, op, 'DaemonFailed');
    later(world);
    const failed = reconcile(world);
    expect(failed.status.phase).toBe('Failed');
    expect(failed.status.rollback).toMatchObject({
      phase: 'Failed',
      reason: 'RollbackBudgetExceeded',
      failureBudget: { allowed: 1, used: 2 },
    });
    expect(creates(failed)).toEqual([]);
    later(world);
    expect(creates(reconcile(world))).toEqual([]);
  });

  it('does not roll back on a quarantine it did not cause, nor on InvalidParameters', () => {
    const world = exampleCluster(8, waves('RollBackAll'));
    reconcile(world);
    finish(world, operationsOf(world)[0]!, 'InvalidParameters');
    later(world);
    const plan = reconcile(world);
    expect(plan.status.phase).toBe('Halted');
    expect(plan.status.rollback).toBeUndefined();
  });
});
