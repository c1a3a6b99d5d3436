/** ClusterCache: which reconciles each informer event makes due, and rolloutSnapshot's reads of it. */
import { describe, expect, it } from 'vitest';
import { ClusterCache, RESOURCE_KINDS, type WorkKey } from '../../../src/app/fleet/controller/cluster-cache.js';
import { rolloutSnapshot } from '../../../src/app/fleet/controller/rollout-snapshot.js';
import { LABEL_ROLLOUT } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import type { LeaseFacts } from '../../../src/domain/fleet/order/snapshot.js';
import type { InformerEvent } from '../../../src/ports/fleet/controller-cluster.js';
import { exampleNodes } from '../../domain/rollout/example-cluster.js';
import { makeRelease } from '../../domain/rollout/fixtures.js';
import { operationFacts, RELEASE, ROLLBACK_RELEASE, rolloutObject, runSpec } from './controller-fixtures.js';

const NODES = [...exampleNodes(2).values()];
const RELEASES = [makeRelease(RELEASE, '1.4.2'), makeRelease(ROLLBACK_RELEASE, '1.4.1')];
const ROLLOUTS = [rolloutObject('north'), rolloutObject('south')];
const OPERATIONS = [operationFacts('north-child', { [LABEL_ROLLOUT]: 'north' }), operationFacts('by-hand')];

const LEASES: LeaseFacts[] = NODES.map((node) => ({ name: node.name, renewMs: 1_000, durationMs: 40_000 }));

const EVERYTHING: WorkKey[] = ['rollout/north', 'rollout/south', `release/${RELEASE}`, `release/${ROLLBACK_RELEASE}`];
const EVERY_ROLLOUT: WorkKey[] = ['rollout/north', 'rollout/south'];

function replaceOf(kind: (typeof RESOURCE_KINDS)[number]): InformerEvent {
  const objects = { nodes: NODES, releases: RELEASES, rollouts: ROLLOUTS, operations: OPERATIONS, leases: LEASES }[
    kind
  ];
  return { type: 'replace', kind, objects } as InformerEvent;
}

function syncedCache(): ClusterCache {
  const cache = new ClusterCache();
  for (const kind of RESOURCE_KINDS) cache.apply(replaceOf(kind));
  return cache;
}

const sorted = (keys: readonly WorkKey[]): WorkKey[] => [...keys].sort();

describe('ClusterCache', () => {
  it('nothing is due until all five kinds were listed once; then every rollout and release is', () => {
    const cache = new ClusterCache();
    const dueBeforeSync = [
      cache.apply(replaceOf('rollouts')),
      cache.apply(replaceOf('releases')),
      cache.apply({ type: 'upsert', kind: 'rollouts', object: rolloutObject('east') }),
      cache.apply(replaceOf('nodes')),
      cache.apply(replaceOf('rollouts')), // a relist: east is gone again
      cache.apply(replaceOf('operations')),
    ];
    expect(dueBeforeSync).toEqual([[], [], [], [], [], []]);
    expect(cache.synced).toBe(false);
    expect(sorted(cache.apply(replaceOf('leases')))).toEqual(sorted(EVERYTHING));
    expect(cache.synced).toBe(true);
  });

  it('once synced, a relist of any kind makes every rollout and release due', () => {
    for (const kind of RESOURCE_KINDS) expect(sorted(syncedCache().apply(replaceOf(kind)))).toEqual(sorted(EVERYTHING));
  });

  it('a replace drops what the list no longer holds', () => {
    const cache = syncedCache();
    cache.apply({ type: 'replace', kind: 'rollouts', objects: [rolloutObject('south')] });
    expect(cache.get('rollouts', 'north')).toBeUndefined();
    expect([...cache.all('rollouts')].map((rollout) => rollout.name)).toEqual(['south']);
  });

  it('a child that moves along while live makes only its rollout due', () => {
    const cache = syncedCache();
    const child = operationFacts('north-child', { [LABEL_ROLLOUT]: 'north' });
    expect(cache.apply({ type: 'upsert', kind: 'operations', object: { ...child, startedMs: 5 } })).toEqual([
      'rollout/north',
    ]);
  });

  it('a child that starts or stops being live makes every rollout due (a conflict elsewhere may start or end)', () => {
    const cache = syncedCache();
    const created = operationFacts('south-child', { [LABEL_ROLLOUT]: 'south' });
    expect(sorted(cache.apply({ type: 'upsert', kind: 'operations', object: created }))).toEqual(EVERY_ROLLOUT);
    const finished = { ...created, phase: 'Complete' as const };
    expect(sorted(cache.apply({ type: 'upsert', kind: 'operations', object: finished }))).toEqual(EVERY_ROLLOUT);
    expect(cache.apply({ type: 'upsert', kind: 'operations', object: { ...finished, message: 'done' } })).toEqual([
      'rollout/south',
    ]);
  });

  it.each([
    ['an operation made by hand', operationFacts('another-by-hand')],
    ['an operation naming a rollout that does not exist', operationFacts('orphan', { [LABEL_ROLLOUT]: 'west' })],
  ])('%s makes every rollout due', (_label, operation) => {
    expect(sorted(syncedCache().apply({ type: 'upsert', kind: 'operations', object: operation }))).toEqual(
      EVERY_ROLLOUT,
    );
  });

  it('a deleted operation (whose labels the event no longer carries) makes every rollout due', () => {
    expect(sorted(syncedCache().apply({ type: 'delete', kind: 'operations', name: 'north-child' }))).toEqual(
      EVERY_ROLLOUT,
    );
  });

  it('a Node changing or going makes every rollout due, and no release', () => {
    const node = { ...NODES[0]!, labels: { changed: 'yes' } };
    expect(sorted(syncedCache().apply({ type: 'upsert', kind: 'nodes', object: node }))).toEqual(EVERY_ROLLOUT);
    expect(sorted(syncedCache().apply({ type: 'delete', kind: 'nodes', name: node.name }))).toEqual(EVERY_ROLLOUT);
  });

  it('a release makes its own reconcile and every rollout due', () => {
    const release = { ...RELEASES[0]!, resourceVersion: '2' };
    const due = syncedCache().apply({ type: 'upsert', kind: 'releases', object: release });
    expect(sorted(due)).toEqual(sorted([`release/${RELEASE}`, ...EVERY_ROLLOUT]));
  });

  it('a rollout makes only itself due, also when it goes', () => {
    expect(syncedCache().apply({ type: 'upsert', kind: 'rollouts', object: rolloutObject('east') })).toEqual([
      'rollout/east',
    ]);
    expect(syncedCache().apply({ type: 'delete', kind: 'rollouts', name: 'north' })).toEqual(['rollout/north']);
  });

  it('delete removes the object and upsert replaces it', () => {
    const cache = syncedCache();
    for (const kind of RESOURCE_KINDS) {
      const name = [...cache.all(kind)][0]!.name;
      cache.apply({ type: 'delete', kind, name } as InformerEvent);
      expect(cache.get(kind, name)).toBeUndefined();
    }
    cache.apply({ type: 'upsert', kind: 'rollouts', object: { ...ROLLOUTS[1]!, resourceVersion: '9' } });
    expect(cache.get('rollouts', 'south')?.resourceVersion).toBe('9');
  });

  it('a Lease renewal makes rollouts due only when it can change a verdict', () => {
    const cache = syncedCache();
    const renew = (renewMs: number, durationMs = 40_000): WorkKey[] =>
      sorted(cache.apply({ type: 'upsert', kind: 'leases', object: { name: 'node-000', renewMs, durationMs } }));
    // A kubelet renewing every ten seconds, with nothing completed on its machine: nothing to plan.
    expect(renew(11_000)).toEqual([]);
    const done = { ...operationFacts('north-child', { [LABEL_ROLLOUT]: 'north' }), phase: 'Complete' as const };
    cache.apply({ type: 'upsert', kind: 'operations', object: { ...done, completedMs: 15_000 } });
    // The first renewal after the operation completed proves the node came back.
    expect(renew(21_000)).toEqual(EVERY_ROLLOUT);
    expect(renew(31_000)).toEqual([]);
    // A renewal after the Lease ran out: the node is back.
    expect(renew(90_000)).toEqual(EVERY_ROLLOUT);
    // Another duration, a new Lease, a Lease gone.
    expect(renew(100_000, 60_000)).toEqual(EVERY_ROLLOUT);
    const fresh = { name: 'node-new', renewMs: 1, durationMs: 40_000 };
    expect(sorted(cache.apply({ type: 'upsert', kind: 'leases', object: fresh }))).toEqual(EVERY_ROLLOUT);
    expect(sorted(cache.apply({ type: 'delete', kind: 'leases', name: 'node-new' }))).toEqual(EVERY_ROLLOUT);
  });
});

describe('rolloutSnapshot', () => {
  it('splits the operations into its children and everyone else’s, and names its releases', () => {
    const cache = syncedCache();
    cache.apply({
      type: 'upsert',
      kind: 'operations',
      object: operationFacts('south-child', { [LABEL_ROLLOUT]: 'south' }, 'node-001'),
    });
    const snapshot = rolloutSnapshot(cache, 'north')!;
    expect(snapshot.rollout.name).toBe('north');
    expect(snapshot.children.map((child) => child.name)).toEqual(['north-child']);
    expect(snapshot.foreignOperations).toEqual([
      { name: 'by-hand', machineRef: 'node-000', phase: 'InProgress' },
      { name: 'south-child', machineRef: 'node-001', phase: 'InProgress' },
    ]);
    expect(snapshot.children[0]).toMatchObject({ machineRef: 'node-000', ownerUid: null, phase: 'InProgress' });
    expect(snapshot.nodes.map((node) => node.name)).toEqual(NODES.map((node) => node.name));
    expect(snapshot.release?.name).toBe(RELEASE);
    expect(snapshot.rollbackRelease?.name).toBe(ROLLBACK_RELEASE);
  });

  it('looks the releases up by spec.releaseRef.name and spec.rollback.releaseRef.name', () => {
    const cache = syncedCache();
    const swapped = runSpec({
      releaseRef: { name: ROLLBACK_RELEASE },
      rollback: { releaseRef: { name: RELEASE }, maxInFlight: 1 },
    });
    cache.apply({ type: 'upsert', kind: 'rollouts', object: rolloutObject('swapped', swapped) });
    const snapshot = rolloutSnapshot(cache, 'swapped')!;
    expect([snapshot.release?.name, snapshot.rollbackRelease?.name]).toEqual([ROLLBACK_RELEASE, RELEASE]);
    const unknown = runSpec({ releaseRef: { name: 'agent-9.9.9' }, rollback: null });
    cache.apply({ type: 'upsert', kind: 'rollouts', object: rolloutObject('unknown', unknown) });
    expect(rolloutSnapshot(cache, 'unknown')).toMatchObject({ release: null, rollbackRelease: null });
  });

  it.each([
    ['a null spec', null],
    ['a string spec', 'Run'],
    ['a numeric release name', { releaseRef: { name: 7 }, rollback: { releaseRef: 'agent-1.4.1' } }],
    ['a null releaseRef', { releaseRef: null, rollback: [] }],
  ])('a malformed spec (%s) gives null releases without throwing', (_label, spec) => {
    const cache = syncedCache();
    cache.apply({ type: 'upsert', kind: 'rollouts', object: rolloutObject('odd', spec) });
    expect(rolloutSnapshot(cache, 'odd')).toMatchObject({ release: null, rollbackRelease: null });
  });

  it('is null for a rollout the cache does not hold', () => {
    expect(rolloutSnapshot(syncedCache(), 'east')).toBeNull();
  });
});
