// The fake at the HTTP level: the MachineOperation write paths the client tests do not reach,
// authentication and the resourceVersion bookkeeping.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { COLLECTION } from './client-helpers.js';
import { httpClientFor, op } from './http-helpers.js';

let server: FakeApiServer;
async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}
afterEach(async () => {
  await server.close();
});
const { call } = httpClientFor(() => server.origin);

describe('MachineOperation writes over HTTP', () => {
  it('creates with 201, assigns metadata and drops a submitted status', async () => {
    await start();
    const answer = await call('POST', COLLECTION, { ...op('op-a'), status: { phase: 'Complete' }, unknownField: 1 });
    expect(answer.status).toBe(201);
    expect(answer.json).toEqual({
      apiVersion: 'unbounded-cloud.io/v1alpha3',
      kind: 'MachineOperation',
      metadata: {
        name: 'op-a',
        uid: expect.any(String),
        resourceVersion: server.resourceVersion(),
        generation: 1,
        creationTimestamp: expect.any(String),
      },
      spec: { machineRef: 'node-1', operationKind: 'AgentUpgrade' },
    });
    expect(server.get('op-a')).toEqual(answer.json);
  });

  it('answers a duplicate create with 409 AlreadyExists and a bad body with 400', async () => {
    await start();
    server.create(op('op-a'));
    const duplicate = await call('POST', COLLECTION, op('op-a'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.json).toMatchObject({ reason: 'AlreadyExists', code: 409 });

    const garbage = await call('POST', COLLECTION, '{not json');
    expect(garbage.status).toBe(400);
    expect(garbage.json).toMatchObject({ reason: 'BadRequest', code: 400 });

    const wrongKind = await call('POST', COLLECTION, { ...op('op-b'), kind: 'Machine' });
    expect(wrongKind.status).toBe(400);

    const nameless = await call('POST', COLLECTION, { spec: {} });
    expect(nameless.status).toBe(422);
    expect(nameless.json).toMatchObject({ reason: 'Invalid', code: 422 });
  });

  it('deletes with 200 and the deleted object, then 404', async () => {
    await start();
    server.create(op('op-a'));
    const deleted = await call('DELETE', `${COLLECTION}/op-a`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toMatchObject({ metadata: { name: 'op-a', resourceVersion: server.resourceVersion() } });
    expect(server.get('op-a')).toBeUndefined();
    expect((await call('DELETE', `${COLLECTION}/op-a`)).status).toBe(404);
  });

  it('GET .../status returns the object', async () => {
    await start();
    const created = server.create({ ...op('op-a'), status: { phase: 'Pending' } });
    const answer = await call('GET', `${COLLECTION}/op-a/status`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(created);
  });

  it('PUT status replaces status only, with optimistic concurrency', async () => {
    await start();
    const created = server.create(op('op-a'));
    const base = { ...created, spec: { machineRef: 'changed' } };

    const withoutVersion = await call('PUT', `${COLLECTION}/op-a/status`, {
      ...base,
      metadata: { name: 'op-a' },
      status: { phase: 'InProgress' },
    });
    expect(withoutVersion.status).toBe(422);
    expect(withoutVersion.json).toMatchObject({ reason: 'Invalid', code: 422 });

    const ok = await call('PUT', `${COLLECTION}/op-a/status`, { ...base, status: { phase: 'InProgress' } });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({
      spec: created.spec,
      status: { phase: 'InProgress' },
      metadata: { resourceVersion: server.resourceVersion(), generation: 1 },
    });

    const stale = await call('PUT', `${COLLECTION}/op-a/status`, { ...base, status: { phase: 'Complete' } });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });

    const wrongName = await call('PUT', `${COLLECTION}/op-a/status`, {
      ...base,
      metadata: { ...base.metadata, name: 'op-b' },
    });
    expect(wrongName.status).toBe(400);

    expect(server.statusWrites('op-a')).toEqual([{ phase: 'InProgress' }]);
    expect(server.get('op-a')?.status).toEqual({ phase: 'InProgress' });
  });

  it('PUT/PATCH status of a missing object is 404', async () => {
    await start();
    expect(
      (await call('PATCH', `${COLLECTION}/absent/status`, { status: {} }, 'application/merge-patch+json')).status,
    ).toBe(404);
    expect((await call('PUT', `${COLLECTION}/absent/status`, { ...op('absent'), status: {} })).status).toBe(404);
  });

  it('refuses strategic merge and apply patches with 415', async () => {
    await start();
    server.create(op('op-a'));
    for (const type of ['application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/json']) {
      const answer = await call('PATCH', `${COLLECTION}/op-a/status`, { status: { phase: 'Complete' } }, type);
      expect(answer.status).toBe(415);
      expect(answer.json).toMatchObject({ reason: 'UnsupportedMediaType', code: 415 });
    }
  });

  it('does not persist a status write that changes nothing', async () => {
    await start();
    server.create({ ...op('op-a'), status: { phase: 'InProgress' } });
    const before = server.resourceVersion();
    const answer = await call(
      'PATCH',
      `${COLLECTION}/op-a/status`,
      { status: { phase: 'InProgress' } },
      'application/merge-patch+json',
    );
    expect(answer.status).toBe(200);
    expect(server.resourceVersion()).toBe(before);
    expect(server.statusWrites('op-a')).toEqual([{ phase: 'InProgress' }]);
  });

  it('patches the spec of the main resource, bumping generation, and answers methods it does not serve with 405', async () => {
    await start();
    server.create(op('op-a'));
    const patched = await call(
      'PATCH',
      `${COLLECTION}/op-a`,
      { spec: { machineRef: 'node-2' } },
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ metadata: { generation: 2 }, spec: { machineRef: 'node-2' } });
    const answer = await call('POST', `${COLLECTION}/op-a`, op('op-a'));
    expect(answer.status).toBe(405);
    expect(answer.json).toMatchObject({ reason: 'MethodNotAllowed', code: 405 });
  });

  it('answers 401 without one of the configured tokens, and records the request', async () => {
    server = await startFakeApiServer({ tokens: ['good'] });
    expect((await call('GET', COLLECTION)).status).toBe(401);
    expect(server.requestCount()).toBe(1);
    expect((await call('GET', '/version')).json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('bumps one global resourceVersion on every persisted change', async () => {
    await start();
    const seen = [server.resourceVersion()];
    server.create(op('op-a'));
    seen.push(server.resourceVersion());
    await call(
      'PATCH',
      `${COLLECTION}/op-a/status`,
      { status: { phase: 'InProgress' } },
      'application/merge-patch+json',
    );
    seen.push(server.resourceVersion());
    server.setNode('node-1', {});
    seen.push(server.resourceVersion());
    server.delete('op-a');
    seen.push(server.resourceVersion());
    expect(seen.map(Number)).toEqual([0, 1, 2, 3, 4].map((i) => Number(seen[0]) + i));
  });
});
