/**
 * The built-in resources of the conformance suite (kube-apiserver.contract.ts registers it), as
 * the rollout controller uses them: Nodes (paged lists, label selectors, watches with membership,
 * merge patches with a resourceVersion precondition; expiry is the fake's own section, since a real
 * server's Node watch cache may hold its whole history), Leases (create, conditional
 * update, MicroTime) and Events (create with the validation events.k8s.io/v1 applies; their cases
 * are in kube-apiserver.events.contract.ts). Nodes are created and deleted by the admin, since no
 * kubelet registers any.
 */
import { describe, expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import { eventCases, refusedEventCases } from './kube-apiserver.events.contract.js';
import { lease, leases, node, NODES, type Stored, stored } from './kube-apiserver.objects.js';
import { causesOf, MERGE_PATCH, rv, statusShape, watchEvents } from './kube-apiserver.support.js';

const LEASES = leases('default');

async function createNode(suite: Suite, name: string, labels: Record<string, string>): Promise<Stored> {
  const answer = await suite.api.admin('POST', NODES, { body: node(name, labels) });
  expect(answer.status, answer.text).toBe(201);
  return stored(answer);
}

const patchNode = (suite: Suite, name: string, metadata: Record<string, unknown>) =>
  suite.api.admin('PATCH', `${NODES}/${name}`, { body: { metadata }, contentType: MERGE_PATCH });

async function listVersion(suite: Suite, path: string): Promise<string> {
  return (stored(await suite.api.admin('GET', path)).metadata as { resourceVersion: string }).resourceVersion;
}

function nodeCases(suite: Suite): void {
  it('lists Nodes in pages by label, every page at the first page resourceVersion', async () => {
    for (const name of ['page-node-a', 'page-node-b', 'page-node-c'])
      await createNode(suite, name, { 'contract/page': 'yes' });
    const query = `labelSelector=${encodeURIComponent('contract/page in (yes)')}&limit=2`;
    const first = (await suite.api.admin('GET', `${NODES}?${query}`)).json as {
      kind: string;
      items: Stored[];
      metadata: { continue?: string; resourceVersion: string };
    };
    expect(first.kind).toBe('NodeList');
    const next = (
      await suite.api.admin('GET', `${NODES}?${query}&continue=${encodeURIComponent(first.metadata.continue ?? '')}`)
    ).json as typeof first;
    expect([...first.items, ...next.items].map((item) => item.metadata.name)).toEqual([
      'page-node-a',
      'page-node-b',
      'page-node-c',
    ]);
    expect(next.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(next.metadata.continue ?? '').toBe('');
  });

  it('watches Nodes: ADDED, MODIFIED on a patch, nothing for a patch that changes nothing, DELETED as it leaves the selector', async () => {
    const from = await listVersion(suite, NODES);
    const created = await createNode(suite, 'watched-node', { 'contract/watch': 'yes' });
    const annotated = stored(
      await patchNode(suite, 'watched-node', { annotations: { 'agent-upgrade.dev/agent-version': '1.4.2' } }),
    );
    const again = stored(
      await patchNode(suite, 'watched-node', { annotations: { 'agent-upgrade.dev/agent-version': '1.4.2' } }),
    );
    expect(again.metadata.resourceVersion).toBe(annotated.metadata.resourceVersion);
    const left = stored(await patchNode(suite, 'watched-node', { labels: { 'contract/watch': null } }));
    await patchNode(suite, 'watched-node', { labels: { 'contract/watch': 'yes' } });
    expect((await suite.api.admin('DELETE', `${NODES}/watched-node`)).status).toBe(200);
    const answer = await suite.api.admin(
      'GET',
      `${NODES}?watch=1&resourceVersion=${from}&timeoutSeconds=2&labelSelector=contract%2Fwatch%3Dyes`,
      { timeoutMs: 12_000 },
    );
    const seen = watchEvents(answer).filter((entry) => entry.type !== 'BOOKMARK');
    expect(seen.map((entry) => entry.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'DELETED']);
    expect(seen.slice(0, 3).map((entry) => rv(entry.object))).toEqual([rv(created), rv(annotated), rv(left)]);
    expect(seen[1]?.object.metadata).toMatchObject({ annotations: { 'agent-upgrade.dev/agent-version': '1.4.2' } });
  });
}

function nodeWriteCases(suite: Suite): void {
  it('names the Node in AlreadyExists, NotFound and a stale patch precondition (409 Conflict)', async () => {
    const created = await createNode(suite, 'named-node', {});
    const again = await suite.api.admin('POST', NODES, { body: node('named-node') });
    expect(statusShape(again)).toMatchObject({
      reason: 'AlreadyExists',
      code: 409,
      details: { name: 'named-node', kind: 'nodes' },
    });
    expect((await patchNode(suite, 'named-node', { annotations: { a: 'b' } })).status).toBe(200);
    const stale = await patchNode(suite, 'named-node', {
      resourceVersion: created.metadata.resourceVersion,
      annotations: { a: 'c' },
    });
    expect(statusShape(stale)).toMatchObject({
      reason: 'Conflict',
      code: 409,
      details: { name: 'named-node', kind: 'nodes' },
    });
    for (const [method, answer] of [
      ['GET', await suite.api.admin('GET', `${NODES}/absent-node`)],
      ['PATCH', await patchNode(suite, 'absent-node', { annotations: { a: 'b' } })],
      ['DELETE', await suite.api.admin('DELETE', `${NODES}/absent-node`)],
    ] as const)
      expect(statusShape(answer), method).toMatchObject({
        reason: 'NotFound',
        code: 404,
        details: { name: 'absent-node', kind: 'nodes' },
      });
  });
}

/** A Lease as a leader holds it. */
const LEASE_SPEC = {
  holderIdentity: 'controller-0',
  leaseDurationSeconds: 15,
  acquireTime: '2024-01-01T00:00:00.000000Z',
  renewTime: '2024-01-01T00:00:05.123456Z',
  leaseTransitions: 0,
};

function leaseCases(suite: Suite): void {
  it('creates a Lease (201, MicroTimes kept to the microsecond) and names it in AlreadyExists and NotFound', async () => {
    const created = await suite.api.admin('POST', LEASES, { body: lease('lease-create', LEASE_SPEC) });
    expect(created.status, created.text).toBe(201);
    expect(stored(created).spec).toEqual(LEASE_SPEC);
    const again = await suite.api.admin('POST', LEASES, { body: lease('lease-create', LEASE_SPEC) });
    const details = { group: 'coordination.k8s.io', kind: 'leases' };
    expect(statusShape(again)).toMatchObject({
      reason: 'AlreadyExists',
      code: 409,
      details: { ...details, name: 'lease-create' },
    });
    const missing = await suite.api.admin('GET', `${LEASES}/lease-absent`);
    expect(statusShape(missing)).toMatchObject({
      reason: 'NotFound',
      code: 404,
      details: { ...details, name: 'lease-absent' },
    });
  });
}

function leaseUpdateCases(suite: Suite): void {
  it('updates a Lease by PUT only on its current resourceVersion: stale is 409, none is 422, no change keeps the version', async () => {
    const created = stored(await suite.api.admin('POST', LEASES, { body: lease('lease-update', LEASE_SPEC) }));
    const based = (resourceVersion: string | undefined, holderIdentity: string) =>
      lease(
        'lease-update',
        { ...LEASE_SPEC, holderIdentity },
        resourceVersion === undefined ? {} : { resourceVersion },
      );
    const taken = await suite.api.admin('PUT', `${LEASES}/lease-update`, {
      body: based(created.metadata.resourceVersion, 'controller-1'),
    });
    expect(taken.status, taken.text).toBe(200);
    const raced = await suite.api.admin('PUT', `${LEASES}/lease-update`, {
      body: based(created.metadata.resourceVersion, 'controller-2'),
    });
    expect(statusShape(raced)).toMatchObject({
      reason: 'Conflict',
      code: 409,
      details: { name: 'lease-update', kind: 'leases' },
    });
    const unconditional = await suite.api.admin('PUT', `${LEASES}/lease-update`, {
      body: based(undefined, 'controller-2'),
    });
    expect(unconditional.status).toBe(422);
    expect(causesOf(unconditional)).toEqual(['FieldValueInvalid metadata.resourceVersion']);
    const same = await suite.api.admin('PUT', `${LEASES}/lease-update`, {
      body: based(stored(taken).metadata.resourceVersion, 'controller-1'),
    });
    expect(stored(same).metadata.resourceVersion).toBe(stored(taken).metadata.resourceVersion);
    expect(stored(await suite.api.admin('GET', `${LEASES}/lease-update`)).spec?.['holderIdentity']).toBe(
      'controller-1',
    );
  });

  it('refuses a Lease the API refuses: a time without microseconds (400), a zero duration (422), a missing namespace (404)', async () => {
    const noMicros = await suite.api.admin('POST', LEASES, {
      body: lease('lease-time', { renewTime: '2024-01-01T00:00:00Z' }),
    });
    expect(statusShape(noMicros)).toMatchObject({ reason: 'BadRequest', code: 400 });
    const zero = await suite.api.admin('POST', LEASES, {
      body: lease('lease-zero', { leaseDurationSeconds: 0, leaseTransitions: -1 }),
    });
    expect(zero.status).toBe(422);
    expect(causesOf(zero)).toEqual([
      'FieldValueInvalid spec.leaseDurationSeconds',
      'FieldValueInvalid spec.leaseTransitions',
    ]);
    const nowhere = await suite.api.admin('POST', leases('no-such-namespace'), {
      body: lease('lease-nowhere', LEASE_SPEC),
    });
    expect(statusShape(nowhere)).toMatchObject({
      reason: 'NotFound',
      code: 404,
      details: { name: 'no-such-namespace', kind: 'namespaces' },
    });
  });
}

export function builtinContract(suite: Suite): void {
  describe('Nodes: paged lists and watches', () => nodeCases(suite));
  describe('Nodes: errors that name them, preconditions', () => nodeWriteCases(suite));
  describe('Leases: create', () => leaseCases(suite));
  describe('Leases: conditional update and refusals', () => leaseUpdateCases(suite));
  describe('Events: create', () => eventCases(suite));
  describe('Events: what the validation refuses', () => refusedEventCases(suite));
}
