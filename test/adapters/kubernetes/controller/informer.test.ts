// runInformer against the fake API server over loopback HTTP: a paged list is one `replace`, the
// watch after it `upsert`s and `delete`s; a dropped watch resumes from where it was, a compacted
// history relists, a failed list backs off on the Clock, refused credentials end it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CollectionEvent } from '../../../../src/adapters/fleet/kubernetes/informer.js';
import { runInformer } from '../../../../src/adapters/fleet/kubernetes/informer.js';
import { readNode } from '../../../../src/adapters/fleet/kubernetes/read-objects.js';
import { NODES_PATH } from '../../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { ClusterError } from '../../../../src/domain/common/port-errors.js';
import type { NodeFacts } from '../../../../src/domain/fleet/order/snapshot.js';
import type { InformerEvent } from '../../../../src/ports/fleet/controller-cluster.js';
import { SteppedClock } from '../../../support/stepped-clock.js';
import { waitFor } from '../../../support/wait-for.js';
import { EventLog, settled, startHarness, type Harness, type HarnessOptions } from './controller-harness.js';

type NodeEvent = CollectionEvent<NodeFacts>;

/** `replace a,b` / `upsert a` / `delete a`: what a test compares. */
function summary(event: NodeEvent): string {
  if (event.type === 'replace') return `replace ${event.objects.map((node) => node.name).join(',')}`;
  return event.type === 'upsert' ? `upsert ${event.object.name}` : `delete ${event.name}`;
}

const isReplace = (event: NodeEvent): boolean => event.type === 'replace';

let harness: Harness | undefined;
let stop: AbortController;
let running: Promise<void> | undefined;
let log: EventLog<NodeEvent>;

beforeEach(() => {
  stop = new AbortController();
  log = new EventLog<NodeEvent>();
});
afterEach(async () => {
  stop.abort();
  await settled(running);
  await harness?.close();
  harness = undefined;
  running = undefined;
});

/** A harness with `nodes` (n-1 …) and the Nodes informer running on it. */
async function informNodes(nodes: number, options: HarnessOptions = {}): Promise<Harness> {
  const started = (harness = await startHarness(options));
  for (let index = 1; index <= nodes; index += 1)
    started.fake.setNode(`n-${index}`, { 'kubernetes.io/arch': 'amd64' }, { note: `node ${index}` });
  const resource = { resource: 'nodes', path: NODES_PATH, read: readNode };
  running = runInformer(started.cluster.informerParts('nodes'), resource, log.push, stop.signal);
  return started;
}

/** The informer's watch is open on the fake (a drop now hits it). */
async function watchOpen(fake: Harness['fake']): Promise<void> {
  expect(await waitFor(() => fake.openWatches().length === 1, 10_000, 10)).toBe(true);
}

describe('the list and the watch', () => {
  it('delivers a list of more objects than a page as one replace, then each watched change', async () => {
    const { fake, metrics } = await informNodes(5, { informers: { pageSize: 2 } });
    const replaced = await log.next(isReplace);
    expect(summary(replaced)).toBe('replace n-1,n-2,n-3,n-4,n-5');
    const lists = metrics.requests.filter((sample) => sample.verb === 'list');
    expect(lists).toEqual([1, 2, 3].map(() => ({ verb: 'list', resource: 'nodes', code: 200 })));

    fake.setNode('n-6', { 'kubernetes.io/arch': 'arm64' });
    fake.deleteNode('n-1');
    await log.next((event) => event.type === 'delete');
    expect(log.events.map(summary)).toEqual(['replace n-1,n-2,n-3,n-4,n-5', 'upsert n-6', 'delete n-1']);
    expect(log.events[1]).toEqual({
      type: 'upsert',
      object: {
        name: 'n-6',
        uid: fake.getNode('n-6')?.metadata.uid,
        labels: { 'kubernetes.io/arch': 'arm64' },
        annotations: {},
      },
    });
  });

  it('resumes a dropped watch without a relist and without losing a change made while it was down', async () => {
    const { fake, metrics } = await informNodes(2);
    await log.next(isReplace);
    await watchOpen(fake);
    fake.dropWatches();
    fake.setNode('n-3', {});
    await log.next((event) => event.type === 'upsert');
    expect(log.events.map(summary)).toEqual(['replace n-1,n-2', 'upsert n-3']);
    expect(metrics.requests.filter((sample) => sample.verb === 'list')).toHaveLength(1);
    expect(metrics.requests.filter((sample) => sample.verb === 'watch').length).toBeGreaterThanOrEqual(2);
  });

  it('relists on 410 Gone after the history was compacted, and the new replace leaves out what was deleted', async () => {
    const { fake } = await informNodes(3);
    await log.next(isReplace);
    await watchOpen(fake);
    fake.dropWatches();
    fake.deleteNode('n-2');
    fake.compact();
    await log.next((event) => isReplace(event) && event !== log.events[0]);
    expect(log.events.map(summary)).toEqual(['replace n-1,n-2,n-3', 'replace n-1,n-3']);
    // The relisted informer watches again, from the new list's version.
    fake.setNode('n-4', {});
    await log.next((event) => event.type === 'upsert');
    expect(log.events.map(summary).slice(2)).toEqual(['upsert n-4']);
  });
});

describe('failures', () => {
  it('backs off on the Clock after a 500 on the list, then lists again', async () => {
    const clock = new SteppedClock();
    const started = (harness = await startHarness({ clock }));
    started.fake.failNext({ method: 'GET', path: /^\/api\/v1\/nodes$/, watch: false }, { status: 500 });
    started.fake.setNode('n-1', {});
    const resource = { resource: 'nodes', path: NODES_PATH, read: readNode };
    running = runInformer(started.cluster.informerParts('nodes'), resource, log.push, stop.signal);

    // The informer waits on the clock, and nothing is delivered while it does.
    expect(await waitFor(() => clock.sleepers === 1, 10_000, 10)).toBe(true);
    expect(log.events).toEqual([]);
    expect(started.metrics.requests).toEqual([{ verb: 'list', resource: 'nodes', code: 500 }]);
    const before = clock.nowMs();
    await clock.runUntil(() => log.events.length > 0);
    // retryDelayMs 400 with the jitter fixed at half way between half and all of it.
    expect(clock.nowMs() - before).toBe(300);
    expect(log.events.map(summary)).toEqual(['replace n-1']);
  });

  it('counts a watch the server refuses with the code it was answered, then watches again', async () => {
    const { fake, metrics } = await informNodes(1);
    // Armed before the list is answered, so it is the first watch that is refused.
    fake.failNext({ method: 'GET', path: /^\/api\/v1\/nodes$/, watch: true }, { status: 500 });
    await log.next(isReplace);
    fake.setNode('n-2', {});
    await log.next((event) => event.type === 'upsert');
    expect(log.events.map(summary)).toEqual(['replace n-1', 'upsert n-2']);
    expect(metrics.requests).toEqual([
      { verb: 'list', resource: 'nodes', code: 200 },
      { verb: 'watch', resource: 'nodes', code: 500 },
      { verb: 'watch', resource: 'nodes', code: 200 },
    ]);
  });

  it('rejects with ClusterError unauthorized once refused credentials reach the streak limit', async () => {
    const started = (harness = await startHarness({ fake: { tokens: ['someone-elses-token'] } }));
    const delivered = new EventLog<InformerEvent>();
    const before = started.clock.nowMs();
    const outcome = await started.cluster.inform(delivered.push, stop.signal).then(
      () => null,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(ClusterError);
    expect(outcome).toMatchObject({ name: 'ClusterError', code: 'unauthorized', status: 401 });
    // Three refusals were not enough: the streak also had to span the one-second window.
    expect(started.clock.nowMs() - before).toBeGreaterThanOrEqual(1_000);
    expect(delivered.events).toEqual([]);
    const seen = new Set(started.metrics.requests.map((sample) => `${sample.verb} ${sample.code}`));
    expect([...seen]).toEqual(['list 401']);
  });
});
