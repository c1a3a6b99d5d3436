// The controller's writes through a pacer, over real HTTP to the fake API server: a 429 with
// Retry-After is a ClusterError (the reconcile backs off as for any refusal) that pauses every
// later write of the process on the clock; a 429 without one pauses nothing; writes wait for
// their tokens; the Lease's writes have a bucket of their own.

import { afterEach, describe, expect, it } from 'vitest';
import { connectController } from '../../../../src/adapters/fleet/kubernetes/connect-controller.js';
import { OPERATIONS_PATH } from '../../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { TokenBucket } from '../../../../src/adapters/fleet/kubernetes/token-bucket.js';
import { MemoryClock } from '../../../../src/adapters/common/memory/memory-clock.js';
import { ClusterError } from '../../../../src/domain/common/port-errors.js';
import { writeKubeconfig } from '../../../support/kube/machine-operations.js';
import { makeScratch } from '../../../support/real-tree.js';
import { RecordingLogger } from '../../../support/recording-logger.js';
import {
  CONTROLLER_NAMESPACE,
  operationManifest,
  RecordingMetrics,
  startHarness,
  type Harness,
} from './controller-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const CREATE = { method: 'POST', path: new RegExp(`^${OPERATIONS_PATH}$`) };
const created = (h: Harness): string[] => h.fake.operations.list().map((object) => object.metadata.name);

async function paced(pacing: { qps: number; burst: number } | null): Promise<Harness & { clock: MemoryClock }> {
  const clock = new MemoryClock();
  const started = (harness = await startHarness({ clock, pacer: new TokenBucket(clock, pacing) }));
  return { ...started, clock };
}

describe('paced writes', () => {
  it('a 429 with Retry-After refuses that create, and no write goes out until it has passed', async () => {
    const h = await paced(null);
    h.fake.failNext(CREATE, { status: 429, retryAfterSeconds: 3 });
    const refused = await h.cluster.createOperation(operationManifest('op-1', 'n-1')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClusterError);
    expect(refused).toMatchObject({ status: 429, code: 'refused' });
    const refusedAtMs = h.clock.monotonicMs();
    expect(await h.cluster.createOperation(operationManifest('op-2', 'n-2'))).toBe('created');
    expect(h.clock.monotonicMs() - refusedAtMs).toBeGreaterThanOrEqual(3_000);
    expect(created(h)).toEqual(['op-2']);
  });

  it('a 429 without Retry-After is a refusal like any other: nothing waits', async () => {
    const h = await paced(null);
    h.fake.failNext(CREATE, { status: 429 });
    await expect(h.cluster.createOperation(operationManifest('op-1', 'n-1'))).rejects.toMatchObject({ status: 429 });
    expect(await h.cluster.createOperation(operationManifest('op-2', 'n-2'))).toBe('created');
    expect(h.clock.monotonicMs()).toBe(0);
  });

  it('writes beyond the burst wait for their tokens on the clock, and every one lands', async () => {
    const h = await paced({ qps: 10, burst: 2 });
    const names = Array.from({ length: 6 }, (_, index) => `op-${index}`);
    const answers = await Promise.all(
      names.map((name, index) => h.cluster.createOperation(operationManifest(name, `n-${index}`))),
    );
    expect(answers).toEqual(Array(6).fill('created'));
    expect(created(h).sort()).toEqual(names);
    // Four tokens beyond the burst of two, at ten a second.
    expect(h.clock.monotonicMs()).toBeGreaterThanOrEqual(400);
  });
});

describe('connectController with pacing', () => {
  it("a Retry-After on the cluster's writes does not hold the Lease's, which have a bucket of their own", async () => {
    const clock = new MemoryClock();
    const started = (harness = await startHarness({ clock }));
    const scratch = makeScratch('write-pacing-');
    const connection = await connectController({
      kubeconfig: writeKubeconfig(scratch.root, started.fake.origin),
      leaseNamespace: CONTROLLER_NAMESPACE,
      leaseName: 'agent-upgrade-controller',
      eventsNamespace: 'default',
      identity: 'replica-a',
      clock,
      logger: new RecordingLogger(),
      metrics: new RecordingMetrics(),
      connect: { env: {} },
      pacing: { qps: 20, burst: 30 },
    });
    try {
      started.fake.failNext(CREATE, { status: 429, retryAfterSeconds: 30 });
      await expect(connection.cluster.createOperation(operationManifest('op-1', 'n-1'))).rejects.toMatchObject({
        status: 429,
      });
      const record = { holder: 'replica-a', leaseDurationSeconds: 15, acquireMs: 1, renewMs: 1, transitions: 0 };
      expect(await connection.leases.create(record)).toMatchObject({ kind: 'written' });
      expect(clock.monotonicMs()).toBe(0);
      expect(await connection.cluster.createOperation(operationManifest('op-2', 'n-2'))).toBe('created');
      expect(clock.monotonicMs()).toBeGreaterThanOrEqual(30_000);
    } finally {
      connection.cluster.close();
      scratch.cleanup();
    }
  });
});
