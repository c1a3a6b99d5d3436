// The fake driven by the real @kubernetes/client-node 1.4.0 client: what the daemon will see.
// Here: status writes, their preconditions and injected failures.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { apiFailure, coords, customObjects, mergePatch, upgrade } from './client-helpers.js';

let server: FakeApiServer;

async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}

afterEach(async () => {
  await server.close();
});

const condition = (type: string, status: string) => ({
  type,
  status,
  reason: 'Testing',
  lastTransitionTime: '2024-01-01T00:00:00Z',
});

describe('status writes', () => {
  it('merge-patches status, keeps spec and generation, and bumps the resourceVersion', async () => {
    await start();
    const created = server.create(upgrade('op-a', 'node-1'));

    const patched = (await customObjects(server.origin).patchClusterCustomObjectStatus(
      {
        ...coords,
        name: 'op-a',
        body: { status: { phase: 'InProgress', message: 'staging' } },
        fieldManager: 'agent-upgrade',
      },
      mergePatch,
    )) as unknown;

    expect(patched).toEqual({
      ...created,
      metadata: { ...created.metadata, resourceVersion: server.resourceVersion() },
      status: { phase: 'InProgress', message: 'staging' },
    });
    expect(Number(server.resourceVersion())).toBeGreaterThan(Number(created.metadata.resourceVersion));
    const request = server.requests.at(-1);
    expect(request).toMatchObject({
      method: 'PATCH',
      path: '/apis/unbounded-cloud.io/v1alpha3/machineoperations/op-a/status',
      query: { fieldManager: 'agent-upgrade' },
    });
    expect(request?.headers['content-type']).toBe('application/merge-patch+json');
  });

  it('merges nested status fields (RFC 7386: null deletes, arrays replace)', async () => {
    await start();
    server.create({
      ...upgrade('op-a', 'node-1'),
      status: { phase: 'InProgress', message: 'x', conditions: [condition('Completed', 'False')] },
    });
    const api = customObjects(server.origin);

    await api.patchClusterCustomObjectStatus(
      {
        ...coords,
        name: 'op-a',
        body: { status: { phase: 'Complete', message: null, conditions: [condition('Completed', 'True')] } },
      },
      mergePatch,
    );

    expect(server.get('op-a')?.status).toEqual({ phase: 'Complete', conditions: [condition('Completed', 'True')] });
    expect(server.statusWrites('op-a')).toEqual([{ phase: 'Complete', conditions: [condition('Completed', 'True')] }]);
  });

  it('ignores everything but status in a status patch', async () => {
    await start();
    const created = server.create(upgrade('op-a', 'node-1'));
    await customObjects(server.origin).patchClusterCustomObjectStatus(
      {
        ...coords,
        name: 'op-a',
        body: { spec: { machineRef: 'elsewhere' }, metadata: { labels: { a: 'b' } }, status: { phase: 'Failed' } },
      },
      mergePatch,
    );
    expect(server.get('op-a')?.spec).toEqual(created.spec);
    expect(server.get('op-a')?.metadata.labels).toBeUndefined();
    expect(server.get('op-a')?.status).toEqual({ phase: 'Failed' });
  });

  it('rejects a patch whose metadata.resourceVersion precondition is stale with 409 Conflict', async () => {
    await start();
    const created = server.create(upgrade('op-a', 'node-1'));
    const api = customObjects(server.origin);
    await api.patchClusterCustomObjectStatus(
      { ...coords, name: 'op-a', body: { status: { phase: 'InProgress' } } },
      mergePatch,
    );

    const failure = await apiFailure(
      api.patchClusterCustomObjectStatus(
        {
          ...coords,
          name: 'op-a',
          body: { metadata: { resourceVersion: created.metadata.resourceVersion }, status: { phase: 'Complete' } },
        },
        mergePatch,
      ),
    );

    expect(failure.code).toBe(409);
    expect(failure.status).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409, details: { name: 'op-a' } });
    expect(server.get('op-a')?.status).toEqual({ phase: 'InProgress' });
  });

  it('accepts a patch whose precondition is current', async () => {
    await start();
    const created = server.create(upgrade('op-a', 'node-1'));
    await customObjects(server.origin).patchClusterCustomObjectStatus(
      {
        ...coords,
        name: 'op-a',
        body: { metadata: { resourceVersion: created.metadata.resourceVersion }, status: { phase: 'Complete' } },
      },
      mergePatch,
    );
    expect(server.get('op-a')?.status).toEqual({ phase: 'Complete' });
  });

  it('answers the client default patch type (JSON Patch) with a merge-patch body with 400, as a real server does', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    const failure = await apiFailure(
      customObjects(server.origin).patchClusterCustomObjectStatus({
        ...coords,
        name: 'op-a',
        body: { status: { phase: 'Complete' } },
      }),
    );
    expect(failure.code).toBe(400);
    expect(failure.status).toMatchObject({ reason: 'BadRequest', code: 400 });
    expect(server.statusWrites('op-a')).toEqual([]);
  });

  it('applies a real JSON Patch to status', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    await customObjects(server.origin).patchClusterCustomObjectStatus({
      ...coords,
      name: 'op-a',
      body: [{ op: 'add', path: '/status', value: { phase: 'InProgress' } }],
    });
    expect(server.get('op-a')?.status).toEqual({ phase: 'InProgress' });
  });

  it('answers injected conflicts with 409 and then lets the write through', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    server.conflictNext(2);
    const api = customObjects(server.origin);
    const write = () =>
      api.patchClusterCustomObjectStatus(
        { ...coords, name: 'op-a', body: { status: { phase: 'InProgress' } } },
        mergePatch,
      );

    expect((await apiFailure(write())).status).toMatchObject({ reason: 'Conflict', code: 409 });
    expect((await apiFailure(write())).code).toBe(409);
    await write();

    expect(server.statusWrites('op-a')).toEqual([{ phase: 'InProgress' }]);
  });

  it('answers failNext with the injected Status error, then serves normally', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    server.failNext({ method: 'GET', path: /\/machineoperations\/op-a$/ }, { status: 500 });
    const api = customObjects(server.origin);

    const failure = await apiFailure(api.getClusterCustomObject({ ...coords, name: 'op-a' }));
    expect(failure.code).toBe(500);
    expect(failure.status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
    await expect(api.getClusterCustomObject({ ...coords, name: 'op-a' })).resolves.toMatchObject({
      metadata: { name: 'op-a' },
    });
    expect(server.requestCount({ method: 'GET', path: /\/op-a$/ })).toBe(2);
  });
});
