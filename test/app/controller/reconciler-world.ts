/** A Reconciler over the in-memory API server, the test playing the informers (listInto). */
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { ClusterCache } from '../../../src/app/fleet/controller/cluster-cache.js';
import { Reconciler } from '../../../src/app/fleet/controller/reconciler.js';
import { populatedServer, quietLogger, quietMetrics } from './controller-fixtures.js';

export function reconcilerWorld(size = 3, options: { readonly createBatchMax?: number; readonly spec?: unknown } = {}) {
  const clock = new MemoryClock();
  const server = populatedServer(clock, size, options.spec);
  const cache = new ClusterCache();
  server.listInto(cache);
  const reconciler = new Reconciler({
    cluster: server.client('controller'),
    cache,
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
    ...(options.createBatchMax === undefined ? {} : { createBatchMax: options.createBatchMax }),
  });
  return { clock, server, cache, reconciler };
}
