/**
 * The kube-apiserver conformance suite: the same requests against the project's fake API server
 * (kube-apiserver.fake.test.ts) and a real kube-apiserver (test/kube-real/conformance.test.ts),
 * with the shipped CRDs, so the fake cannot drift from what a client meets on a cluster. Each case
 * asserts status codes, Status reasons and causes and the resulting state, never message text.
 * This file holds the MachineOperation write paths; kube-apiserver.watch.contract.ts the reads and
 * watches; kube-apiserver.release.contract.ts and kube-apiserver.rollout.contract.ts the rollout
 * controller's custom resources (whose CRDs the setup installs on a server that lacks them);
 * kube-apiserver.builtin.contract.ts Nodes, Leases and Events (whose cases are in
 * kube-apiserver.events.contract.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  causesOf,
  type KubeResponse,
  type KubeTarget,
  type KubeTargetFixture,
  MERGE_PATCH,
  JSON_PATCH,
  operation,
  type Operation,
  OPS,
  statusShape,
  upgrade,
} from './kube-apiserver.support.js';
import { builtinContract } from './kube-apiserver.builtin.contract.js';
import { ensureRolloutResources } from './kube-apiserver.objects.js';
import { releaseContract } from './kube-apiserver.release.contract.js';
import { rolloutContract } from './kube-apiserver.rollout.contract.js';
import {
  dateTimeCases,
  INVALID,
  metadataCases,
  schemaCases,
  statusSchemaCases,
} from './kube-apiserver.schema.contract.js';
import { readContract } from './kube-apiserver.watch.contract.js';

/** The fixture of the suite that runs; set in beforeAll. */
export class Suite {
  private fixture: KubeTargetFixture | null = null;

  set(fixture: KubeTargetFixture | null): void {
    this.fixture = fixture;
  }

  get api(): KubeTarget {
    if (this.fixture === null) throw new Error('no target: the case runs outside the contract');
    return this.fixture.target;
  }

  /** Creates as the admin and returns the stored object (the create must succeed). */
  async create(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Operation> {
    const answer = await this.api.admin('POST', OPS, { body: operation(name, spec, extra) });
    expect(answer.status, answer.text).toBe(201);
    return answer.json as Operation;
  }

  patch(
    name: string,
    body: unknown,
    subresource: '' | '/status' = '',
    contentType = MERGE_PATCH,
  ): Promise<KubeResponse> {
    return this.api.admin('PATCH', `${OPS}/${name}${subresource}`, { body, contentType });
  }

  async get(name: string): Promise<Operation> {
    const answer = await this.api.admin('GET', `${OPS}/${name}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.json as Operation;
  }
}

function conflictCases(suite: Suite): void {
  it('answers a write based on a stale resourceVersion with the 409 Conflict Status, and changes nothing', async () => {
    const created = await suite.create('stale', upgrade('node-a'));
    expect((await suite.patch('stale', { status: { phase: 'InProgress' } }, '/status')).status).toBe(200);
    const current = await suite.get('stale');
    const conflict = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409 };
    const details = { name: 'stale', group: 'unbounded-cloud.io', kind: 'machineoperations' };
    const based = { resourceVersion: created.metadata.resourceVersion };
    for (const [body, subresource] of [
      [{ metadata: based, status: { phase: 'Complete' } }, '/status'],
      [{ metadata: based, spec: { machineRef: 'node-b' } }, ''],
    ] as const) {
      const answer = await suite.patch('stale', body, subresource);
      expect(answer.status, answer.text).toBe(409);
      expect(statusShape(answer)).toEqual({ ...conflict, details });
    }
    expect(await suite.get('stale')).toEqual(current);
  });

  it('requires a resourceVersion on PUT (422 naming metadata.resourceVersion)', async () => {
    const created = await suite.create('put-needs-rv', upgrade('node-a'));
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    const answer = await suite.api.admin('PUT', `${OPS}/put-needs-rv`, { body: { ...created, metadata } });
    expect(answer.status, answer.text).toBe(422);
    expect(statusShape(answer)).toEqual({
      ...INVALID,
      details: { name: 'put-needs-rv', group: 'unbounded-cloud.io', kind: 'machineoperations' },
    });
    expect(causesOf(answer)).toEqual(['FieldValueInvalid metadata.resourceVersion']);
  });
}

function subresourceCases(suite: Suite): void {
  it('ignores a status written through the main resource and applies its spec (PATCH and PUT)', async () => {
    await suite.create('main-writes', upgrade('node-a'));
    await suite.patch('main-writes', { status: { phase: 'InProgress' } }, '/status');
    const patched = await suite.patch('main-writes', { spec: { machineRef: 'node-b' }, status: { phase: 'Failed' } });
    expect(patched.status, patched.text).toBe(200);
    expect({ ref: (patched.json as Operation).spec['machineRef'], status: (patched.json as Operation).status }).toEqual(
      { ref: 'node-b', status: { phase: 'InProgress' } },
    );
    const current = await suite.get('main-writes');
    const put = await suite.api.admin('PUT', `${OPS}/main-writes`, {
      body: { ...current, spec: { ...current.spec, machineRef: 'node-c' }, status: { phase: 'Complete' } },
    });
    expect(put.status, put.text).toBe(200);
    const stored = await suite.get('main-writes');
    expect({ ref: stored.spec['machineRef'], status: stored.status }).toEqual({
      ref: 'node-c',
      status: { phase: 'InProgress' },
    });
  });

  it('ignores spec and metadata written through /status (PATCH and PUT)', async () => {
    const created = await suite.create('status-writes', upgrade('node-a'));
    const patched = await suite.patch(
      'status-writes',
      { spec: { machineRef: 'node-b' }, metadata: { labels: { a: 'b' } }, status: { phase: 'InProgress' } },
      '/status',
    );
    expect(patched.status, patched.text).toBe(200);
    const current = await suite.get('status-writes');
    expect({ spec: current.spec, labels: current.metadata.labels, status: current.status }).toEqual({
      spec: created.spec,
      labels: undefined,
      status: { phase: 'InProgress' },
    });
    const put = await suite.api.admin('PUT', `${OPS}/status-writes/status`, {
      body: { ...current, spec: upgrade('node-z'), status: { phase: 'Complete' } },
    });
    expect(put.status, put.text).toBe(200);
    const stored = await suite.get('status-writes');
    expect({ spec: stored.spec, status: stored.status }).toEqual({ spec: created.spec, status: { phase: 'Complete' } });
  });
}

function generationCases(suite: Suite): void {
  it('bumps generation on spec changes only; a write that changes nothing is not stored', async () => {
    const trail: [number, string][] = [];
    const note = (op: Operation): number => trail.push([op.metadata.generation, op.metadata.resourceVersion]);
    note(await suite.create('generations', upgrade('node-a')));
    note((await suite.patch('generations', { status: { phase: 'InProgress' } }, '/status')).json as Operation);
    note((await suite.patch('generations', { metadata: { labels: { tier: 'blue' } } })).json as Operation);
    note(
      (await suite.patch('generations', { spec: { parameters: { downloadURL: 'https://h/b.tar.gz' } } }))
        .json as Operation,
    );
    note(
      (await suite.patch('generations', { spec: { parameters: { downloadURL: 'https://h/b.tar.gz' } } }))
        .json as Operation,
    );
    note(
      (await suite.patch('generations', [{ op: 'replace', path: '/spec/machineRef', value: 'node-b' }], '', JSON_PATCH))
        .json as Operation,
    );
    expect(trail.map(([generation]) => generation)).toEqual([1, 1, 1, 2, 2, 3]);
    const versions = trail.map(([, version]) => version);
    expect(new Set(versions).size).toBe(5);
    expect(versions[4]).toBe(versions[3]);
  });

  it('takes JSON Patch on /status and answers a patch of the wrong shape with 400', async () => {
    await suite.create('json-patch', upgrade('node-a'));
    const patched = await suite.patch(
      'json-patch',
      [{ op: 'add', path: '/status', value: { phase: 'InProgress' } }],
      '/status',
      JSON_PATCH,
    );
    expect(patched.status, patched.text).toBe(200);
    expect((patched.json as Operation).status).toEqual({ phase: 'InProgress' });
    for (const [body, type] of [
      [{ status: { phase: 'Complete' } }, JSON_PATCH],
      [[1], MERGE_PATCH],
    ] as const)
      expect((await suite.patch('json-patch', body, '/status', type)).status, type).toBe(400);
    expect(
      (await suite.patch('json-patch', { status: {} }, '/status', 'application/strategic-merge-patch+json')).status,
    ).toBe(415);
    expect((await suite.get('json-patch')).status).toEqual({ phase: 'InProgress' });
  });
}

function lifecycleCases(suite: Suite): void {
  it('names the object in 404 and 409 AlreadyExists Statuses', async () => {
    const missing = await suite.patch('absent', { status: {} }, '/status');
    const details = { name: 'absent', group: 'unbounded-cloud.io', kind: 'machineoperations' };
    expect(statusShape(missing)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      details,
    });
    await suite.create('twice', upgrade('node-a'));
    const again = await suite.api.admin('POST', OPS, { body: operation('twice', upgrade('node-a')) });
    expect(statusShape(again)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'AlreadyExists',
      code: 409,
      details: { ...details, name: 'twice' },
    });
  });

  it('keeps an object with a finalizer after DELETE (deletionTimestamp set) until the finalizer goes', async () => {
    await suite.create('finalized', upgrade('node-a'), {
      metadata: { name: 'finalized', finalizers: ['example.com/hold'] },
    });
    const deleted = await suite.api.admin('DELETE', `${OPS}/finalized`);
    expect(deleted.status, deleted.text).toBe(200);
    const marked = await suite.get('finalized');
    expect({
      deleting: typeof marked.metadata.deletionTimestamp,
      generation: marked.metadata.generation,
      finalizers: marked.metadata.finalizers,
    }).toEqual({ deleting: 'string', generation: 2, finalizers: ['example.com/hold'] });
    expect((await suite.patch('finalized', { status: { phase: 'Failed' } }, '/status')).status).toBe(200);
    expect((await suite.patch('finalized', { metadata: { finalizers: ['example.com/other'] } })).status).toBe(422);
    expect((await suite.patch('finalized', { metadata: { finalizers: null } })).status).toBe(200);
    expect((await suite.api.admin('GET', `${OPS}/finalized`)).status).toBe(404);
  });
}

/** Registers the whole suite against the target `setup` starts (once, for every case). */
export function kubeApiServerContract(name: string, setup: () => Promise<KubeTargetFixture>): void {
  describe(`kube-apiserver conformance: ${name}`, () => {
    const suite = new Suite();
    let fixture: KubeTargetFixture | null = null;
    beforeAll(async () => {
      fixture = await setup();
      suite.set(fixture);
      await ensureRolloutResources(fixture.target);
    }, 240_000);
    afterAll(async () => {
      suite.set(null);
      await fixture?.stop();
    }, 60_000);

    describe('schema validation and pruning', () => {
      schemaCases(suite);
      metadataCases(suite);
      statusSchemaCases(suite);
      dateTimeCases(suite);
    });
    describe('writes: optimistic concurrency', () => conflictCases(suite));
    describe('writes: the status subresource', () => subresourceCases(suite));
    describe('writes: generation and patch types', () => generationCases(suite));
    describe('objects: errors that name them, finalizers', () => lifecycleCases(suite));
    readContract(suite);
    builtinContract(suite);
    releaseContract(suite);
    rolloutContract(suite);
  });
}
