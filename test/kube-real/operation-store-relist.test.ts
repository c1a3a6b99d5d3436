/**
 * KubernetesOperationStore against a real kube-apiserver without the watch cache, so that
 * compacting etcd expires the resourceVersion its watch resumes from. Connected as the daemon
 * connects (see operation-store.test.ts); what the client asked is read from the audit log.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { CRD, POLICY, RBAC, RealCluster, upgrade } from '../support/kube/real-cluster.js';
import { DELIVERY_MS, names, stopStreams, storeFor, streamOf } from './operation-store-harness.js';

let cluster: RealCluster;
afterEach(stopStreams);

async function relistsAfterExpiry(): Promise<void> {
  const machine = 'relist-node';
  const stream = streamOf(await storeFor(cluster, machine));
  await cluster.create('relist-before', upgrade(machine));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['relist-before']);
  // Two writes the selector hides: etcd keeps the revision it compacts at, so the cursor's next
  // revision must lie below it for the watch from the cursor to be refused.
  await cluster.create('relist-hidden-1', upgrade('elsewhere'));
  await cluster.create('relist-hidden-2', upgrade('elsewhere'));
  await cluster.compactEtcd();
  const listsBefore = (await cluster.requestsOf(machine, 'list')).length;
  // The next watch starts from the cursor, which compaction just expired: 410, then a relist.
  const relisted = async (): Promise<boolean> => (await cluster.requestsOf(machine, 'list')).length > listsBefore;
  expect(await waitFor(relisted, 20_000, 250)).toBe(true);
  await cluster.create('relist-after', upgrade(machine));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['relist-after']);
  expect(await stream.take(1, 1_500)).toEqual([]);
}

describe(
  'KubernetesOperationStore on a real kube-apiserver (watch cache off, etcd compacted)',
  { timeout: 120_000 },
  () => {
    beforeAll(async () => {
      // Without the watch cache a watch is served by etcd, so compacting etcd expires resourceVersions.
      cluster = await RealCluster.start([CRD, RBAC, POLICY], ['--watch-cache=false']);
    }, 240_000);
    afterAll(async () => {
      await cluster?.stop();
    }, 30_000);
    it('relists after its watch is told 410 Expired, without losing or repeating an operation', relistsAfterExpiry);
  },
);
