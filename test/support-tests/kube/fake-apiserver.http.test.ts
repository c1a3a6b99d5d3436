// The fake at the HTTP level: framing, the write paths the client tests do not reach, discovery,
// fault injection, bookkeeping and shutdown.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { COLLECTION, sleep, within } from './client-helpers.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
}

let server: FakeApiServer;
async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}
afterEach(async () => {
  await server.close();
});

function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = httpRequest(
      `${server.origin}${path}`,
      { method, agent: false, headers: payload === undefined ? {} : { 'content-type': contentType } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('client timeout')));
    req.end(payload);
  });
}

/** Opens a watch and collects raw body text until the server ends it or `stopAfterMs` passes. */
function rawWatch(
  query: string,
  stopAfterMs: number,
): Promise<{ status: number; headers: IncomingHttpHeaders; lines: unknown[]; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.origin}${COLLECTION}?${query}`, { agent: false }, (res) => {
      let text = '';
      let ended = false;
      const finish = (): void => {
        clearTimeout(timer);
        req.destroy();
        const lines = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l): unknown => JSON.parse(l));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, lines, ended });
      };
      const timer = setTimeout(finish, stopAfterMs);
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => {
        ended = true;
        finish();
      });
      res.on('error', () => finish());
    });
    req.on('error', reject);
    req.end();
  });
}

const op = (name: string, machineRef = 'node-1') => ({
  apiVersion: 'unbounded-cloud.io/v1alpha3',
  kind: 'MachineOperation',
  metadata: { name },
  spec: { machineRef, operationKind: 'AgentUpgrade' },
});

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

describe('faults and bookkeeping', () => {
  it('failNext honours times, matchers and delayMs', async () => {
    await start();
    server.create(op('op-a'));
    server.failNext({ method: 'get', path: /\/op-a$/, watch: false }, { status: 503, times: 2, delayMs: 100 });

    const startedAt = Date.now();
    const first = await call('GET', `${COLLECTION}/op-a`);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(90);
    expect(first.status).toBe(503);
    expect(first.json).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    expect((await call('GET', `${COLLECTION}`)).status).toBe(200); // not matched by the path
    expect((await call('GET', `${COLLECTION}/op-a`)).status).toBe(503);
    expect((await call('GET', `${COLLECTION}/op-a`)).status).toBe(200);
  });

  it('delay() holds matching requests until undone', async () => {
    await start();
    const undo = server.delay({ path: /^\/version$/ }, 400);
    let startedAt = Date.now();
    expect((await call('GET', '/version')).status).toBe(200);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(390);
    startedAt = Date.now();
    expect((await call('GET', '/api')).status).toBe(200); // not matched
    expect(Date.now() - startedAt).toBeLessThan(390);
    undo();
    startedAt = Date.now();
    await call('GET', '/version');
    expect(Date.now() - startedAt).toBeLessThan(390);
  });

  it('records every request with path, query, headers and body', async () => {
    await start();
    server.create(op('op-a'));
    await call(
      'PATCH',
      `${COLLECTION}/op-a/status?fieldManager=x`,
      { status: { phase: 'Failed' } },
      'application/merge-patch+json',
    );
    await call('GET', `${COLLECTION}?watch=true&timeoutSeconds=1&resourceVersion=abc`);

    expect(server.requests).toEqual([
      {
        method: 'PATCH',
        path: `${COLLECTION}/op-a/status`,
        query: { fieldManager: 'x' },
        headers: expect.objectContaining({ 'content-type': 'application/merge-patch+json' }),
        body: '{"status":{"phase":"Failed"}}',
      },
      {
        method: 'GET',
        path: COLLECTION,
        query: { watch: 'true', timeoutSeconds: '1', resourceVersion: 'abc' },
        headers: expect.any(Object),
        body: undefined,
      },
    ]);
    expect(server.requestCount()).toBe(2);
    expect(server.requestCount({ watch: true })).toBe(1);
    expect(server.requestCount({ method: 'PATCH', watch: false })).toBe(1);
  });
});

describe('shutdown', () => {
  it('close() ends open watches, cancels timers, is idempotent and leaves no handles', async () => {
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await start({ bookmarkIntervalMs: 20 });
    server.delay({ path: /^\/api$/ }, 10_000);
    const watch = rawWatch('watch=true&allowWatchBookmarks=true&timeoutSeconds=60', 5000);
    const held = call('GET', '/api').catch((e: unknown) => e);
    await sleep(100);
    expect(server.openWatches()).toHaveLength(1);

    await within(Promise.all([server.close(), server.close()]), 2000);
    const watched = await within(watch, 2000);
    expect(watched.ended).toBe(false); // torn down, not a clean end
    expect(await within(held, 2000)).toBeInstanceOf(Error);
    expect(server.openWatches()).toEqual([]);
    await sleep(20);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(timersBefore);
    expect(process.getActiveResourcesInfo()).not.toContain('TCPServerWrap');
  });
});
