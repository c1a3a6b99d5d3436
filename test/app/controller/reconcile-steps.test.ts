/** reconcileSteps: a plan's creates become slow-start batches (1, 2, 4, … up to the cap), nothing else moves. */
import { describe, expect, it } from 'vitest';
import {
  CREATE_BATCH_MAX,
  nextFirstBatch,
  reconcileSteps,
  slowStart,
} from '../../../src/app/fleet/controller/reconcile-steps.js';
import type { RolloutAction } from '../../../src/domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../src/domain/fleet/decide/child-manifest.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';

const sizes = (batches: readonly (readonly unknown[])[]): number[] => batches.map((batch) => batch.length);
const range = (count: number): number[] => Array.from({ length: count }, (_, index) => index);

const status: RolloutAction = {
  kind: 'UpdateRolloutStatus',
  name: 'fleet',
  resourceVersion: '7',
  status: {} as AgentRolloutStatus,
};
const create = (index: number): RolloutAction => ({
  kind: 'CreateOperation',
  operation: { metadata: { name: `op-${index}` } } as MachineOperationManifest,
});
const event: RolloutAction = {
  kind: 'RecordEvent',
  event: {
    type: 'Normal',
    reason: 'WaveStarted',
    message: '',
    regarding: { kind: 'AgentRollout', name: 'fleet', uid: 'u' },
  },
};

describe('slowStart', () => {
  it('doubles from one up to the cap, then stays at the cap; the last batch holds what is left', () => {
    expect(sizes(slowStart(range(100), 64))).toEqual([1, 2, 4, 8, 16, 32, 37]);
    expect(sizes(slowStart(range(100), 16))).toEqual([1, 2, 4, 8, 16, 16, 16, 16, 16, 5]);
    expect(sizes(slowStart(range(7), 64))).toEqual([1, 2, 4]);
    expect(sizes(slowStart(range(8), 64))).toEqual([1, 2, 4, 1]);
  });

  it('a cap of one is one at a time; nothing gives no batch', () => {
    expect(sizes(slowStart(range(5), 1))).toEqual([1, 1, 1, 1, 1]);
    expect(slowStart([], 64)).toEqual([]);
  });

  it('keeps every item once, in order', () => {
    expect(slowStart(range(100), 3).flat()).toEqual(range(100));
  });

  it('begins where it is told, within one and the cap', () => {
    expect(sizes(slowStart(range(100), 64, 64))).toEqual([64, 36]);
    expect(sizes(slowStart(range(100), 64, 8))).toEqual([8, 16, 32, 44]);
    expect(sizes(slowStart(range(10), 64, 500))).toEqual([10]);
    expect(sizes(slowStart(range(3), 64, 0))).toEqual([1, 2]);
  });
});

describe('nextFirstBatch', () => {
  it('is twice the largest batch sent, up to the cap', () => {
    expect([1, 4, 32, 37, 64].map((largest) => nextFirstBatch(largest, 64))).toEqual([2, 8, 64, 64, 64]);
    expect(nextFirstBatch(1, 1)).toBe(1);
  });
});

describe('reconcileSteps', () => {
  it('the status update first, the creates in batches in plan order, then the events', () => {
    const steps = reconcileSteps([status, ...range(10).map(create), event], CREATE_BATCH_MAX);
    expect(steps.map((step) => step.kind)).toEqual([
      'UpdateRolloutStatus',
      'CreateBatch',
      'CreateBatch',
      'CreateBatch',
      'CreateBatch',
      'RecordEvent',
    ]);
    const batches = steps.flatMap((step) => (step.kind === 'CreateBatch' ? [step.operations] : []));
    expect(sizes(batches)).toEqual([1, 2, 4, 3]);
    expect(batches.flat().map((operation) => operation.metadata.name)).toEqual(range(10).map((index) => `op-${index}`));
  });

  it('a cap below one is read as one; a plan without creates is its actions', () => {
    expect(
      sizes(
        reconcileSteps(range(3).map(create), 0).map((step) => (step.kind === 'CreateBatch' ? step.operations : [])),
      ),
    ).toEqual([1, 1, 1]);
    expect(reconcileSteps([status, event], CREATE_BATCH_MAX)).toEqual([status, event]);
  });
});
