// The leader-election Lease against the fake API server: a missing Lease, a create that
// round-trips the record (MicroTime to the millisecond), and writes guarded by the resourceVersion.

import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesLeaseStore } from '../../../../src/adapters/fleet/kubernetes/kubernetes-lease-store.js';
import { ClusterError } from '../../../../src/domain/common/port-errors.js';
import type { LeaseRecord, LeaseWriteOutcome, StoredLease } from '../../../../src/ports/fleet/controller-cluster.js';
import { CONTROLLER_NAMESPACE, startHarness, type Harness } from './controller-harness.js';

const LEASE = 'agent-upgrade-controller';

const RECORD: LeaseRecord = {
  holder: 'controller-a',
  leaseDurationSeconds: 15,
  acquireMs: Date.UTC(2025, 0, 6, 12, 0, 0, 291),
  renewMs: Date.UTC(2025, 0, 6, 12, 0, 7, 5),
  transitions: 2,
};

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function leaseStore(namespace = CONTROLLER_NAMESPACE): Promise<{ store: KubernetesLeaseStore; h: Harness }> {
  const h = (harness = await startHarness());
  return { store: new KubernetesLeaseStore(h.http, namespace, LEASE, h.metrics), h };
}

function written(outcome: LeaseWriteOutcome): StoredLease {
  if (outcome.kind !== 'written') throw new Error(`expected written, got ${outcome.kind}`);
  return outcome.lease;
}

describe('KubernetesLeaseStore', () => {
  it('reads a missing Lease as null', async () => {
    const { store, h } = await leaseStore();
    expect(await store.get()).toBeNull();
    expect(h.metrics.requests).toEqual([{ verb: 'get', resource: 'leases', code: 404 }]);
  });

  it('creates the Lease with the record round-tripped, and a second create is a conflict', async () => {
    const { store, h } = await leaseStore();
    const created = written(await store.create(RECORD));
    expect(created.lease).toEqual(RECORD);
    expect(created.resourceVersion).toBe(h.fake.lease(CONTROLLER_NAMESPACE, LEASE)?.metadata.resourceVersion);
    expect(h.fake.lease(CONTROLLER_NAMESPACE, LEASE)?.spec).toEqual({
      holderIdentity: 'controller-a',
      leaseDurationSeconds: 15,
      acquireTime: '2025-01-06T12:00:00.291000Z',
      renewTime: '2025-01-06T12:00:07.005000Z',
      leaseTransitions: 2,
    });
    expect(await store.get()).toEqual(created);

    const other = { ...RECORD, holder: 'controller-b' };
    expect(await store.create(other)).toEqual({ kind: 'conflict' });
    expect((await store.get())?.lease.holder).toBe('controller-a');
    expect(h.metrics.requests.map((sample) => `${sample.verb} ${sample.code}`)).toEqual([
      'create 201',
      'get 200',
      'create 409',
      'get 200',
    ]);
  });

  it('updates at the current resourceVersion and answers conflict at a stale one', async () => {
    const { store, h } = await leaseStore();
    const created = written(await store.create(RECORD));
    const renewed = { ...RECORD, renewMs: RECORD.renewMs + 2_001 };
    const updated = written(await store.update(created.resourceVersion, renewed));
    expect(updated.lease).toEqual(renewed);
    expect(updated.resourceVersion).not.toBe(created.resourceVersion);

    const takeover = { ...RECORD, holder: 'controller-b', transitions: 3 };
    expect(await store.update(created.resourceVersion, takeover)).toEqual({ kind: 'conflict' });
    expect(await store.get()).toEqual(updated);
    expect(h.fake.lease(CONTROLLER_NAMESPACE, LEASE)?.spec.renewTime).toBe('2025-01-06T12:00:09.006000Z');
  });

  it('fails with the ClusterError 404 when the namespace does not exist', async () => {
    const { store } = await leaseStore('no-such-namespace');
    const outcome = await store.create(RECORD).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ClusterError);
    expect(outcome).toMatchObject({ status: 404, code: 'refused' });
  });
});
