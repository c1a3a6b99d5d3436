/**
 * The reconciler's slow start across reconciles: a wave's next step begins where the last one's
 * creates left off (twice its largest batch, up to the cap), and after a refused create it begins
 * at one again. Shown by which creates land around a refused one: a batch is sent together.
 */
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { allAtOnceSpec, ROLLOUT } from './controller-fixtures.js';
import { reconcilerWorld } from './reconciler-world.js';

/** 130 machines in one wave at once: a first step of 100 creates, then one of 30. */
function setUp() {
  const { clock, server, cache, reconciler } = reconcilerWorld(130, { spec: allAtOnceSpec() });
  /** The watch catches up, a second passes, and the rollout is reconciled. */
  const step = async (): Promise<unknown> => {
    server.listInto(cache);
    clock.advance(1_000);
    return reconciler.reconcile(`rollout/${ROLLOUT}`);
  };
  return { server, reconciler, step };
}

const refused = new ClusterError(503, 'Service Unavailable');

describe('slow start across reconciles', () => {
  it('a step after one whose creates all landed begins with a batch of 64', async () => {
    const { server, reconciler, step } = setUp();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    expect(server.list('operations')).toHaveLength(100);
    // The second create of the next step is refused; sent in one batch of 30, the other 29 land.
    server.faultAt(2, refused, 'create');
    await expect(step()).rejects.toMatchObject({ status: 503 });
    expect(server.list('operations')).toHaveLength(129);
  });

  it('after a refused create the next reconcile begins at one again', async () => {
    const { server, reconciler, step } = setUp();
    server.faultAt(2, refused, 'create');
    await expect(reconciler.reconcile(`rollout/${ROLLOUT}`)).rejects.toMatchObject({ status: 503 });
    expect(server.list('operations')).toHaveLength(2);
    // Batches 1, 2 again: the second create refused, the third sent with it lands.
    server.faultAt(2, refused, 'create');
    await expect(step()).rejects.toMatchObject({ status: 503 });
    expect(server.list('operations')).toHaveLength(4);
  });
});
