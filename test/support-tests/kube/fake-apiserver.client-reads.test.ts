// The fake driven by the real @kubernetes/client-node 1.4.0 client: what the daemon will see.
// Here: lists, pages, gets and field selectors.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { apiFailure, coords, customObjects, upgrade } from './client-helpers.js';

let server: FakeApiServer;

async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}

afterEach(async () => {
  await server.close();
});

describe('reads', () => {
  it('lists operations with the list resourceVersion and items in name order', async () => {
    await start();
    server.create(upgrade('op-b', 'node-1'));
    server.create(upgrade('op-a', 'node-2'));

    const list = (await customObjects(server.origin).listClusterCustomObject({ ...coords })) as unknown;

    expect(list).toEqual({
      apiVersion: 'unbounded-cloud.io/v1alpha3',
      kind: 'MachineOperationList',
      metadata: { resourceVersion: server.resourceVersion() },
      items: [server.get('op-a'), server.get('op-b')],
    });
  });

  it('pages a list with limit and continue', async () => {
    await start();
    for (const name of ['op-1', 'op-2', 'op-3']) server.create(upgrade(name, 'node-1'));
    const api = customObjects(server.origin);

    const first = (await api.listClusterCustomObject({ ...coords, limit: 2 })) as {
      metadata: { continue?: string; resourceVersion: string };
      items: { metadata: { name: string } }[];
    };
    expect(first.items.map((i) => i.metadata.name)).toEqual(['op-1', 'op-2']);
    expect(first.metadata.continue).toEqual(expect.any(String));

    const second = (await api.listClusterCustomObject({
      ...coords,
      limit: 2,
      _continue: first.metadata.continue,
    })) as typeof first;
    expect(second.items.map((i) => i.metadata.name)).toEqual(['op-3']);
    expect(second.metadata.continue).toBeUndefined();
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });

  it('gets one operation with the server-assigned metadata', async () => {
    await start();
    const created = server.create(upgrade('op-a', 'node-1'));

    const got = (await customObjects(server.origin).getClusterCustomObject({ ...coords, name: 'op-a' })) as unknown;

    expect(got).toEqual(created);
    expect(created.metadata).toMatchObject({
      name: 'op-a',
      generation: 1,
      uid: expect.any(String),
      creationTimestamp: expect.stringMatching(/Z$/),
    });
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('answers a missing operation with ApiException 404 and a NotFound Status', async () => {
    await start();
    const failure = await apiFailure(
      customObjects(server.origin).getClusterCustomObject({ ...coords, name: 'absent' }),
    );
    expect(failure.code).toBe(404);
    expect(failure.status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      details: { name: 'absent' },
    });
  });

  it('filters by spec.machineRef with a field selector', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    server.create(upgrade('op-b', 'node-2'));
    server.create(upgrade('op-c', 'node-1'));

    const list = (await customObjects(server.origin).listClusterCustomObject({
      ...coords,
      fieldSelector: 'spec.machineRef=node-1',
    })) as { items: { metadata: { name: string } }[] };

    expect(list.items.map((i) => i.metadata.name)).toEqual(['op-a', 'op-c']);
  });

  it('answers a spec.machineRef field selector with 400 BadRequest when selectableFields is off', async () => {
    await start({ selectableFields: false });
    const failure = await apiFailure(
      customObjects(server.origin).listClusterCustomObject({ ...coords, fieldSelector: 'spec.machineRef=node-1' }),
    );
    expect(failure.code).toBe(400);
    expect(failure.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      message: 'field label not supported: spec.machineRef',
    });
  });
});
