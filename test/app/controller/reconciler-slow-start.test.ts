/**
 * The reconciler's slow start across reconciles: a wave's next step begins where the last one's
 * creates left off (twice its largest batch, up to the cap), and after a refused create it begins
 * at one again. Shown by which creates land around a refused one: a batch is sent together.
 */
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { ClusterCache } from '../../../src/app/fleet/controller/cluster-cache.js';
import { Reconciler } from '../../../src/app/fleet/controller/reconciler.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { populatedServer, quietLogger, quietMetrics, ROLLOUT, runSpec } from './controller-fixtures.js';

/** 130 machines in one wave at once: a first step of 100 creates, then one of 30. */
function setUp() {
  const clock = new MemoryClock();
  const wave = { name: 'all', percent: 100, maxInFlight: '100%' };
  const spec = runSpec({ strategy: { waves: [wave], maxUnavailable: '100%', operationTimeout: '10m' } });
  const server = populatedServer(clock, 130, spec);
  const cache = new ClusterCache();
  server.listInto(cache);
  const reconciler = new Reconciler({
    cluster: server.client('controller'),
    cache,
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
  });
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
