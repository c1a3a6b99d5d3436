// The fake at the HTTP level: discovery, Nodes, and the framing of lists and watches.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { COLLECTION, sleep } from './client-helpers.js';
import { httpClientFor, op } from './http-helpers.js';

let server: FakeApiServer;
async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}
afterEach(async () => {
  await server.close();
});
const { call, rawWatch } = httpClientFor(() => server.origin);

describe('discovery', () => {
  it('serves /version, /api, /apis and each group version as JSON', async () => {
    await start();
    const version = await call('GET', '/version');
    expect(version.status).toBe(200);
    expect(version.headers['content-type']).toBe('application/json');
    expect(version.json).toMatchObject({ major: '1', minor: '32' });

    expect((await call('GET', '/api')).json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const groups = (await call('GET', '/apis')).json as {
      kind: string;
      groups: { name: string; preferredVersion: { groupVersion: string } }[];
    };
    expect(groups.kind).toBe('APIGroupList');
    expect(groups.groups.map((g) => g.preferredVersion.groupVersion)).toEqual([
      'unbounded-cloud.io/v1alpha3',
      'agent-upgrade.dev/v1alpha1',
      'apiextensions.k8s.io/v1',
      'admissionregistration.k8s.io/v1',
      'rbac.authorization.k8s.io/v1',
      'coordination.k8s.io/v1',
      'events.k8s.io/v1',
    ]);

    const core = (await call('GET', '/api/v1')).json as {
      groupVersion: string;
      resources: { name: string; namespaced: boolean; verbs: string[] }[];
    };
    expect(core.groupVersion).toBe('v1');
    expect(core.resources[0]).toMatchObject({ name: 'nodes', namespaced: false, kind: 'Node' });

    const mop = (await call('GET', '/apis/unbounded-cloud.io/v1alpha3')).json as {
      resources: { name: string; namespaced: boolean; verbs: string[]; shortNames?: string[] }[];
    };
    expect(mop.resources).toEqual([
      expect.objectContaining({
        name: 'machineoperations',
        namespaced: false,
        kind: 'MachineOperation',
        shortNames: ['mop'],
        verbs: expect.arrayContaining(['get', 'list', 'watch']),
      }),
      expect.objectContaining({
        name: 'machineoperations/status',
        namespaced: false,
        verbs: ['get', 'patch', 'update'],
      }),
    ]);
    for (const path of [
      '/apis/apiextensions.k8s.io/v1',
      '/apis/admissionregistration.k8s.io/v1',
      '/apis/rbac.authorization.k8s.io/v1',
    ]) {
      expect((await call('GET', path)).json).toMatchObject({ kind: 'APIResourceList' });
    }
  });

  it('claims a pre-1.31 version when selectableFields is off', async () => {
    await start({ selectableFields: false });
    expect((await call('GET', '/version')).json).toMatchObject({ minor: '30' });
  });

  it('answers unknown paths with a NotFound Status', async () => {
    await start();
    const answer = await call('GET', '/apis/unbounded-cloud.io/v1alpha3/namespaces/default/machineoperations');
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });
});

describe('nodes', () => {
  it('serves a Node set by the test and 404 for others', async () => {
    await start();
    server.setNode('node-1', { 'kubernetes.io/hostname': 'node-1', pool: 'blue' });

    const found = await call('GET', '/api/v1/nodes/node-1');
    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1', pool: 'blue' } },
    });

    const missing = await call('GET', '/api/v1/nodes/node-2');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      details: { name: 'node-2', kind: 'nodes' },
    });
  });
});

describe('list', () => {
  it('answers an expired continue token with 410 Expired', async () => {
    await start();
    server.create(op('op-a'));
    server.create(op('op-b'));
    const first = (await call('GET', `${COLLECTION}?limit=1`)).json as {
      metadata: { continue: string; remainingItemCount: number };
    };
    expect(first.metadata.remainingItemCount).toBe(1);
    server.compact();
    const second = await call('GET', `${COLLECTION}?limit=1&continue=${encodeURIComponent(first.metadata.continue)}`);
    expect(second.status).toBe(410);
    expect(second.json).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
  });

  it('filters by metadata.name and rejects unsupported field labels', async () => {
    await start();
    server.create(op('op-a'));
    server.create(op('op-b'));
    const byName = (await call('GET', `${COLLECTION}?fieldSelector=metadata.name%3Dop-b`)).json as {
      items: { metadata: { name: string } }[];
    };
    expect(byName.items.map((i) => i.metadata.name)).toEqual(['op-b']);

    const unsupported = await call('GET', `${COLLECTION}?fieldSelector=status.phase%3DPending`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.json).toMatchObject({ reason: 'BadRequest', code: 400 });
  });

  it('filters by equality label selectors', async () => {
    await start();
    server.create({ ...op('op-a'), metadata: { name: 'op-a', labels: { tier: 'blue' } } });
    server.create(op('op-b'));
    const blue = (await call('GET', `${COLLECTION}?labelSelector=tier%3Dblue`)).json as {
      items: { metadata: { name: string } }[];
    };
    expect(blue.items.map((i) => i.metadata.name)).toEqual(['op-a']);
    const notBlue = (await call('GET', `${COLLECTION}?labelSelector=tier!%3Dblue`)).json as {
      items: { metadata: { name: string } }[];
    };
    expect(notBlue.items.map((i) => i.metadata.name)).toEqual(['op-b']);
  });
});

describe('watch framing', () => {
  it('streams newline-delimited events, chunked, as application/json, with watch=1', async () => {
    await start();
    server.create(op('op-a'));
    const pending = rawWatch('watch=1&resourceVersion=0&timeoutSeconds=1', 3000);
    await sleep(100);
    server.create(op('op-b'));
    const result = await pending;

    expect(result.status).toBe(200);
    expect(result.headers['content-type']).toBe('application/json');
    expect(result.headers['transfer-encoding']).toBe('chunked');
    expect(result.ended).toBe(true);
    expect(result.lines).toEqual([
      { type: 'ADDED', object: server.get('op-a') },
      { type: 'ADDED', object: server.get('op-b') },
    ]);
  });

  it('rejects a non-numeric resourceVersion with 400', async () => {
    await start();
    const answer = await call('GET', `${COLLECTION}?watch=true&resourceVersion=abc`);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ reason: 'BadRequest', code: 400 });
  });
});
