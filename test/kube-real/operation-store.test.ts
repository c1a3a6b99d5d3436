/**
 * KubernetesOperationStore against a real kube-apiserver, connected as the daemon connects
 * (KubeClient.connect with a node's kubeconfig: client certificate, Node,RBAC authorization, the
 * shipped CRD, RBAC and admission policy). Each case runs as a node identity of its own, so one
 * case's operations are never another's. What the client asked and what the server answered is
 * read from the server's audit log (status codes and query parameters only).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import {
  CRD,
  CRD_PRE_130,
  MERGE_PATCH,
  OPS,
  POLICY,
  RBAC,
  queryOf,
  RealCluster,
  upgrade,
} from '../support/kube/real-cluster.js';
import { DELIVERY_MS, names, stopStreams, storeFor, streamOf } from './operation-store-harness.js';

/** The server the running case talks to. */
let cluster: RealCluster;
afterEach(stopStreams);

async function deliversOnce(): Promise<void> {
  const machine = 'deliver-node';
  await cluster.create('deliver-listed', upgrade(machine));
  await cluster.create('deliver-other', upgrade('elsewhere'));
  await cluster.create('deliver-reboot', { ...upgrade(machine), operationKind: 'NodeReboot' });
  await cluster.create('deliver-done', upgrade(machine));
  await cluster.admin('PATCH', `${OPS}/deliver-done/status`, { status: { phase: 'Complete' } }, MERGE_PATCH);
  const store = await storeFor(cluster, machine);
  const stream = streamOf(store);
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['deliver-listed']);
  await cluster.create('deliver-watched', upgrade(machine));
  await cluster.create('deliver-watched-other', upgrade('elsewhere'));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['deliver-watched']);
  expect(await store.markInProgress(await cluster.ref('deliver-watched'), 'working')).toEqual({ kind: 'written' });
  await cluster.create('deliver-third', upgrade(machine));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['deliver-third']);
  expect(await stream.take(1, 1_500)).toEqual([]);
  const selector = `spec.machineRef=${machine}`;
  expect(
    (await cluster.requestsOf(machine, 'list')).some(
      (e) => queryOf(e).get('fieldSelector') === selector && e.responseStatus?.code === 200,
    ),
  ).toBe(true);
  expect((await cluster.requestsOf(machine, 'watch')).some((e) => queryOf(e).get('fieldSelector') === selector)).toBe(
    true,
  );
}

async function consumesBookmarks(): Promise<void> {
  const machine = 'bookmark-node';
  const stream = streamOf(await storeFor(cluster, machine));
  await cluster.create('bookmark-first', upgrade(machine));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['bookmark-first']);
  // Both scopes (this machine's operations, and those without a machineRef) list before they
  // watch, each on its own; count the lists once both watch, or a slow scope's list counts later.
  const watching = async (): Promise<boolean> => {
    const selectors = new Set((await cluster.requestsOf(machine, 'watch')).map((e) => queryOf(e).get('fieldSelector')));
    return selectors.has(`spec.machineRef=${machine}`) && selectors.has('spec.machineRef=');
  };
  expect(await waitFor(watching, DELIVERY_MS, 250)).toBe(true);
  const listsBefore = (await cluster.requestsOf(machine, 'list')).length;
  const hidden = Number((await cluster.create('bookmark-hidden', upgrade('elsewhere'))).metadata.resourceVersion);
  const past = async (): Promise<boolean> =>
    (await cluster.requestsOf(machine, 'watch')).some(
      (e) =>
        queryOf(e).get('fieldSelector') === `spec.machineRef=${machine}` &&
        Number(queryOf(e).get('resourceVersion')) >= hidden,
    );
  expect(await waitFor(past, 20_000, 250)).toBe(true);
  // Not by relisting: the cursor moved with the bookmark alone.
  expect(await cluster.requestsOf(machine, 'list')).toHaveLength(listsBefore);
}

async function retriesConflicts(): Promise<void> {
  const machine = 'conflict-node';
  const store = await storeFor(cluster, machine);
  let conflicted = false;
  for (let round = 0; round < 10 && !conflicted; round += 1) {
    const name = `conflict-${round}`;
    await cluster.create(name, upgrade(machine));
    const ref = await cluster.ref(name);
    let writing = true;
    // Other writers change the object (labels: a new resourceVersion) while the store writes.
    const writers = Array.from({ length: 4 }, async (_, index) => {
      for (let n = 0; writing; n += 1)
        await cluster.admin(
          'PATCH',
          `${OPS}/${name}`,
          { metadata: { labels: { [`w${index}`]: String(n) } } },
          MERGE_PATCH,
        );
    });
    const written = store.markInProgress(ref, 'staging');
    const sawConflict = async (): Promise<boolean> =>
      (await cluster.requestsOf(machine, 'patch')).some(
        (e) => e.objectRef?.name === name && e.responseStatus?.code === 409,
      );
    conflicted = await waitFor(sawConflict, 3_000, 20);
    writing = false;
    await Promise.all(writers);
    expect(await written).toEqual({ kind: 'written' });
    expect((await cluster.status(name))?.['phase']).toBe('InProgress');
  }
  expect(conflicted).toBe(true);
}

async function publishesOnce(): Promise<void> {
  const machine = 'publish-node';
  const store = await storeFor(cluster, machine);
  await cluster.create('publish-op', upgrade(machine));
  const ref = await cluster.ref('publish-op');
  expect(await store.markInProgress(ref, 'staging')).toEqual({ kind: 'written' });
  expect(await cluster.status('publish-op')).toMatchObject({ phase: 'InProgress', message: 'staging' });
  const done = { phase: 'Complete', reason: 'Succeeded', message: 'AgentUpgrade completed' } as const;
  expect(await store.publish(ref, done)).toEqual({ kind: 'written' });
  expect(await store.publish(ref, done)).toEqual({ kind: 'written' });
  expect(await store.publish(ref, { phase: 'Failed', reason: 'DaemonFailed', message: 'late' })).toEqual({
    kind: 'written',
  });
  expect(await store.markInProgress(ref, 'again')).toEqual({ kind: 'written' });
  const status = (await cluster.status('publish-op')) as {
    phase: string;
    completedAt?: string;
    conditions: object[];
  };
  expect({ phase: status.phase, completed: typeof status.completedAt }).toEqual({
    phase: 'Complete',
    completed: 'string',
  });
  expect(status.conditions).toEqual([
    expect.objectContaining({ type: 'Completed', status: 'True', reason: 'Succeeded' }),
  ]);
  const writes = (await cluster.requestsOf(machine, 'patch')).filter((e) => e.objectRef?.name === 'publish-op');
  expect(writes.map((e) => [e.objectRef?.subresource, e.responseStatus?.code])).toEqual([
    ['status', 200],
    ['status', 200],
  ]);
}

async function readsByUid(): Promise<void> {
  const machine = 'read-node';
  const store = await storeFor(cluster, machine);
  await cluster.create('read-op', upgrade(machine));
  const ref = await cluster.ref('read-op');
  expect(await store.read(ref)).toEqual({ operation: ref, phase: null, parameters: upgrade(machine)['parameters'] });
  expect(await store.read({ name: 'read-absent', uid: null })).toBeNull();
  expect((await cluster.admin('DELETE', `${OPS}/read-op`)).status).toBe(200);
  expect(await store.publish(ref, { phase: 'Failed', reason: 'DaemonFailed', message: 'x' })).toEqual({
    kind: 'gone',
  });
  await cluster.create('read-op', upgrade(machine));
  expect(await store.read(ref)).toBeNull();
  expect((await store.read({ name: 'read-op', uid: null }))?.operation.uid).not.toBe(ref.uid);
}

async function refusedElsewhere(): Promise<void> {
  const machine = 'policy-node';
  expect(
    (
      await cluster.admin('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: machine, labels: { pool: 'policy' } },
      })
    ).status,
  ).toBe(201);
  const store = await storeFor(cluster, machine);
  await cluster.create('policy-elsewhere', upgrade('elsewhere'));
  const selectorSpec = {
    operationKind: 'AgentUpgrade',
    machineSelector: { matchLabels: { pool: 'policy' } },
    parameters: upgrade(machine)['parameters'],
  };
  await cluster.create('policy-by-selector', selectorSpec);
  for (const name of ['policy-elsewhere', 'policy-by-selector']) {
    expect(await store.markInProgress(await cluster.ref(name), 'x')).toEqual({ kind: 'forbidden' });
    expect(await cluster.status(name)).toBeUndefined();
  }
  // Delivered all the same (it matches this Node's labels): the daemon sees it, and cannot report on it.
  expect(names(await streamOf(store).take(1, DELIVERY_MS))).toEqual(['policy-by-selector']);
}

async function fallsBackWithoutSelectableField(): Promise<void> {
  const machine = 'fallback-node';
  const selected = (): Promise<number> =>
    cluster.admin('GET', `${OPS}?fieldSelector=spec.machineRef%3D${machine}`).then((a) => a.status);
  await cluster.apply(CRD_PRE_130);
  expect(await waitFor(async () => (await selected()) === 400, 30_000, 200)).toBe(true);
  await cluster.create('fallback-mine', upgrade(machine));
  await cluster.create('fallback-other', upgrade('elsewhere'));
  const stream = streamOf(await storeFor(cluster, machine));
  expect(names(await stream.take(1, DELIVERY_MS))).toEqual(['fallback-mine']);
  expect(await stream.take(1, 1_500)).toEqual([]);
  const lists = await cluster.requestsOf(machine, 'list');
  expect(lists.some((e) => queryOf(e).has('fieldSelector') && e.responseStatus?.code === 400)).toBe(true);
  expect(lists.some((e) => !queryOf(e).has('fieldSelector') && e.responseStatus?.code === 200)).toBe(true);
  await cluster.apply(CRD);
  expect(await waitFor(async () => (await selected()) === 200, 30_000, 200)).toBe(true);
}

describe('KubernetesOperationStore on a real kube-apiserver (watch cache on)', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    cluster = await RealCluster.start([CRD, RBAC, POLICY]);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);
  it(
    "delivers this machine's Pending AgentUpgrade operations, listed then watched, once each, asking with the field selector",
    deliversOnce,
  );
  it('consumes the bookmark a watch ends with: the next watch starts past writes the selector hid', consumesBookmarks);
  it('re-reads and writes again through 409 Conflicts on its status writes', retriesConflicts);
  it('writes InProgress, then one terminal status, and never overwrites it', publishesOnce);
  it('reads an operation by name and uid; a deleted or re-created one is gone', readsByUid);
  it(
    "is refused (403) when it writes another machine's operation, and by the policy a selector-targeted one",
    refusedElsewhere,
  );
  it(
    'with the CRD for servers before 1.30 (no selectable field) falls back to client-side filtering',
    fallsBackWithoutSelectableField,
  );
});
