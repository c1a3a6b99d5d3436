/** A final phase stays as it ended, but only once the status shows none of the rollout's own operations live. */
import { describe, expect, it } from 'vitest';
import { LABEL_OPT_OUT } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { creates, exampleCluster, finish, later, operationsOf, reconcile, start, strategy } from './example-cluster.js';

describe('an aborted rollout', () => {
  it('keeps counting the operations it left running until none is live, then stays as it ended', () => {
    const world = exampleCluster(8, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 3 }] }));
    expect(creates(reconcile(world))).toHaveLength(3);
    later(world);
    reconcile(world);
    for (const op of operationsOf(world)) start(world, op);
    world.spec = { ...world.spec, state: 'Abort' };
    later(world);
    expect(reconcile(world).status).toMatchObject({ phase: 'Aborted', counts: { inFlight: 3, succeeded: 0 } });
    const [first, ...rest] = operationsOf(world);
    finish(world, first!, 'Succeeded');
    later(world);
    expect(reconcile(world).status.counts).toMatchObject({ inFlight: 2, succeeded: 1 });
    for (const op of rest) finish(world, op, 'Succeeded');
    later(world);
    const ended = reconcile(world);
    expect(ended.status).toMatchObject({ phase: 'Aborted', progress: '3/8', counts: { inFlight: 0, succeeded: 3 } });
    expect(creates(ended)).toEqual([]);
    // Now it is done: what happens to its machines afterwards is not its to count.
    const node = world.nodes.get('node-005')!;
    world.nodes.set(node.name, { ...node, labels: { ...node.labels, [LABEL_OPT_OUT]: 'true' } });
    later(world);
    const after = reconcile(world);
    expect(after.actions).toEqual([]);
    expect(after.status).toEqual(ended.status);
  });
});
