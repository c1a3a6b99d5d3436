// ControllerCluster.inform over the fake API server: the four informers, each event tagged with
// its kind, for exactly as long as the signal lets them run.

import { afterEach, describe, expect, it } from 'vitest';
import type { InformerEvent, ResourceKind } from '../../../../src/ports/fleet/controller-cluster.js';
import { machineOperation } from '../../../support/kube/machine-operations.js';
import { SteppedClock } from '../../../support/stepped-clock.js';
import { waitFor } from '../../../support/wait-for.js';
import { EventLog, releaseInput, rolloutInput, settled, startHarness, type Harness } from './controller-harness.js';

let harness: Harness | undefined;
let stop = new AbortController();
let running: Promise<void> | undefined;
afterEach(async () => {
  stop.abort();
  await settled(running);
  await harness?.close();
  harness = undefined;
  running = undefined;
  stop = new AbortController();
});

/** The names each kind's replace delivered, by kind. */
function replaced(events: readonly InformerEvent[]): Partial<Record<ResourceKind, string[]>> {
  const out: Partial<Record<ResourceKind, string[]>> = {};
  for (const event of events) if (event.type === 'replace') out[event.kind] = event.objects.map((item) => item.name);
  return out;
}

/** Whether `promise` settles within `ms` (it is left running otherwise). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  return waitFor(() => done, ms, 10);
}

describe('inform', () => {
  it('lists the five kinds, tags each event with its kind, and ends when the signal aborts', async () => {
    const { fake, cluster } = (harness = await startHarness());
    fake.setNode('n-1', {});
    fake.setLease('kube-node-lease', 'n-1', { holderIdentity: 'n-1', leaseDurationSeconds: 40 });
    fake.releases.create(releaseInput('rel'));
    fake.rollouts.create(rolloutInput('fleet', 'rel'));
    fake.create(machineOperation('op-1', 'n-1'));
    const log = new EventLog<InformerEvent>();
    const informing = (running = cluster.inform(log.push, stop.signal));
    expect(await waitFor(() => Object.keys(replaced(log.events)).length === 5, 10_000, 10)).toBe(true);
    expect(replaced(log.events)).toEqual({
      nodes: ['n-1'],
      leases: ['n-1'],
      releases: ['rel'],
      rollouts: ['fleet'],
      operations: ['op-1'],
    });

    fake.releases.delete('rel');
    fake.create(machineOperation('op-2', 'n-1'));
    await log.next((event) => event.type === 'delete' && event.kind === 'releases');
    const operation = await log.next((event) => event.type === 'upsert' && event.kind === 'operations');
    expect(operation).toMatchObject({ kind: 'operations', object: { name: 'op-2', machineRef: 'n-1' } });

    stop.abort();
    expect(await settlesWithin(informing, 5_000)).toBe(true);
    await expect(informing).resolves.toBeUndefined();
  });

  it('returns at once, delivering nothing, when the signal has already aborted', async () => {
    // A stepped clock never wakes a backoff by itself: nothing can spin if the informers were left running.
    const { cluster } = (harness = await startHarness({ clock: new SteppedClock() }));
    const log = new EventLog<InformerEvent>();
    stop.abort();
    const informing = (running = cluster.inform(log.push, stop.signal));
    expect(await settlesWithin(informing, 3_000)).toBe(true);
    expect(harness.fake.openWatches()).toEqual([]);
  });
});
