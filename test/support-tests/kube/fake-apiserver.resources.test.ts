// The fake's own side of the resources the rollout controller uses (the conformance suite holds
// their HTTP answers to a real server): the test API for Nodes, releases, rollouts, Leases and
// Events, the events a test-API change sends to watches, namespaces, and the bookkeeping a
// simulation settles on (in-flight requests, watch events sent, unrecorded bodies, a bounded
// history, a virtual clock).

import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { COLLECTION, sleep } from './client-helpers.js';

interface Answer {
  readonly status: number;
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
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = payload === undefined ? {} : { 'content-type': contentType };
    const req = httpRequest(`${server.origin}${path}`, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, json: text === '' ? undefined : (JSON.parse(text) as unknown) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('client timeout')));
    req.end(payload);
  });
}

/** `type name` (a bookmark: `BOOKMARK apiVersion kind`) of every event a watch of `path` delivers before the server ends it. */
async function watched(path: string): Promise<string[]> {
  const answer = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(`${server.origin}${path}`, { agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('client timeout')));
    req.end();
  });
  return answer
    .split('\n')
    .filter((line) => line !== '')
    .map(
      (line) =>
        JSON.parse(line) as {
          type: string;
          object: { kind?: string; apiVersion?: string; metadata: { name?: string } };
        },
    )
    .map(({ type, object }) =>
      type === 'BOOKMARK'
        ? `BOOKMARK ${object.apiVersion} ${object.kind}`
        : `${type} ${object.metadata.name ?? ''}`.trim(),
    );
}

const release = (name: string) => ({
  metadata: { name },
  spec: {
    version: '1.4.2',
    artifacts: [{ arch: 'amd64', downloadURL: 'https://h/a.tgz', sha256: 'a'.repeat(64) }],
  },
});

describe('Nodes through the test API', () => {
  it('sends ADDED, MODIFIED and DELETED for setNode and deleteNode, and MODIFIED for an annotation patch', async () => {
    await start();
    const from = server.resourceVersion();
    const created = server.setNode('node-1', { pool: 'blue' });
    expect(created.metadata).toMatchObject({ name: 'node-1', labels: { pool: 'blue' } });
    expect([typeof created.metadata.uid, typeof created.metadata.creationTimestamp]).toEqual(['string', 'string']);
    const replaced = server.setNode('node-1', { pool: 'green' }, { note: 'x' });
    expect(replaced.metadata.uid).toBe(created.metadata.uid);
    const patch = { metadata: { annotations: { 'agent-upgrade.dev/agent-version': '1.4.2' } } };
    const patched = await call('PATCH', '/api/v1/nodes/node-1', patch, 'application/merge-patch+json');
    expect(patched.status).toBe(200);
    const again = await call('PATCH', '/api/v1/nodes/node-1', patch, 'application/merge-patch+json');
    expect(again.json).toEqual(patched.json);
    expect(server.getNode('node-1')?.metadata.annotations).toEqual({
      note: 'x',
      'agent-upgrade.dev/agent-version': '1.4.2',
    });
    server.deleteNode('node-1');
    expect(() => server.deleteNode('node-1')).toThrow();
    expect(await watched(`/api/v1/nodes?watch=1&resourceVersion=${from}&timeoutSeconds=1`)).toEqual([
      'ADDED node-1',
      'MODIFIED node-1',
      'MODIFIED node-1',
      'DELETED node-1',
    ]);
  });

  it('sends Node bookmarks (kind Node, apiVersion v1) and filters a Node watch by label', async () => {
    await start({ bookmarkIntervalMs: 20 });
    server.setNode('blue-1', { pool: 'blue' });
    server.setNode('green-1', { pool: 'green' });
    const events = await watched(
      '/api/v1/nodes?watch=1&labelSelector=pool%3Dblue&allowWatchBookmarks=true&timeoutSeconds=1',
    );
    expect(events[0]).toBe('ADDED blue-1');
    expect(events.slice(1).every((line) => line === 'BOOKMARK v1 Node')).toBe(true);
    expect(events.length).toBeGreaterThan(1);
  });

  it('refuses a Node body with a spec it would not keep, and a patch of anything but labels and annotations', async () => {
    await start();
    const posted = await call('POST', '/api/v1/nodes', { metadata: { name: 'n' }, spec: { unschedulable: true } });
    expect(posted.status).toBe(400);
    server.setNode('n', {});
    const patched = await call(
      'PATCH',
      '/api/v1/nodes/n',
      { spec: { unschedulable: true } },
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(422);
    expect((await call('PUT', '/api/v1/nodes/n', { metadata: { name: 'n' } })).status).toBe(405);
  });
});

describe('releases, rollouts, Leases and Events through the test API', () => {
  it('seeds releases with a status, defaults rollouts, lists, deletes and remembers status writes', async () => {
    await start();
    server.releases.create({ ...release('rel-b'), status: { observedGeneration: 1 } });
    server.releases.create(release('rel-a'));
    expect(server.releases.list().map((item) => [item.metadata.name, item.status])).toEqual([
      ['rel-a', undefined],
      ['rel-b', { observedGeneration: 1 }],
    ]);
    expect(() => server.releases.create({ metadata: { name: 'bad' }, spec: { version: 'x' } })).toThrow();
    const rollout = server.rollouts.create({
      metadata: { name: 'fleet' },
      spec: {
        releaseRef: { name: 'rel-a' },
        targets: { selector: {} },
        strategy: { waves: [{ name: 'all', percent: 100 }] },
      },
    });
    expect(rollout.spec).toMatchObject({ state: 'Preview', strategy: { onFailure: 'Halt' } });
    const body = {
      metadata: { name: 'fleet', resourceVersion: rollout.metadata.resourceVersion },
      status: { phase: 'Preview' },
    };
    expect((await call('PUT', '/apis/agent-upgrade.dev/v1alpha1/agentrollouts/fleet/status', body)).status).toBe(200);
    expect(server.rollouts.statusWrites('fleet')).toEqual([{ phase: 'Preview' }]);
    expect(server.rollouts.delete('fleet').metadata.name).toBe('fleet');
    expect(server.rollouts.get('fleet')).toBeUndefined();
  });

  it('keeps Leases and Events per namespace; a namespace exists when configured or created', async () => {
    await start({ namespaces: ['agent-upgrade-system'] });
    const lease = {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', renewTime: '2024-01-01T01:00:00.000001+01:00' },
    };
    const path = '/apis/coordination.k8s.io/v1/namespaces/agent-upgrade-system/leases';
    expect((await call('POST', path, lease)).status).toBe(201);
    expect(server.lease('agent-upgrade-system', 'leader')?.spec).toEqual({
      holderIdentity: 'a',
      renewTime: '2024-01-01T00:00:00.000001Z',
    });
    const missing = { ...lease, metadata: { name: 'missing' } };
    expect((await call('PUT', `${path.replace('agent-upgrade-system', 'default')}/missing`, missing)).status).toBe(201);
    expect((await call('POST', path.replace('agent-upgrade-system', 'elsewhere'), lease)).status).toBe(404);
    expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'elsewhere' } })).status).toBe(201);
    expect((await call('POST', path.replace('agent-upgrade-system', 'elsewhere'), lease)).status).toBe(201);
    const event = (name: string) => ({
      metadata: { name },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'agent-upgrade.dev/controller',
      reportingInstance: 'c-0',
      action: 'Run',
      reason: 'Run',
      type: 'Normal',
      regarding: { kind: 'AgentRollout', name: 'fleet' },
    });
    for (const [namespace, name] of [
      ['kube-system', 'b'],
      ['default', 'a'],
    ] as const)
      expect((await call('POST', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`, event(name))).status).toBe(
        201,
      );
    expect(server.events().map((item) => (item['metadata'] as { name: string }).name)).toEqual(['a', 'b']);
    const all = (await call('GET', '/apis/events.k8s.io/v1/events')).json as { items: unknown[] };
    expect(all.items).toHaveLength(2);
    expect((await call('POST', '/apis/events.k8s.io/v1/events', event('c'))).status).toBe(405);
  });
});

describe('bookkeeping for a simulation', () => {
  it('counts requests in flight until answered, a watch only until its headers are sent', async () => {
    await start();
    server.delay({ method: 'GET', path: /machineoperations$/, watch: false }, 500);
    const held = call('GET', COLLECTION);
    for (let waited = 0; server.inFlightRequests() === 0 && waited < 2000; waited += 10) await sleep(10);
    expect(server.inFlightRequests()).toBe(1);
    const watch = watched(`${COLLECTION}?watch=1&timeoutSeconds=1`);
    for (let waited = 0; server.openWatches().length === 0 && waited < 2000; waited += 10) await sleep(10);
    expect(server.inFlightRequests()).toBe(1);
    expect((await held).status).toBe(200);
    expect(server.inFlightRequests()).toBe(0);
    await watch;
  });

  it('counts the object events written to every watch, not bookmarks', async () => {
    await start({ bookmarkIntervalMs: 20 });
    const watches = [1, 2].map(() => watched(`${COLLECTION}?watch=1&timeoutSeconds=1&allowWatchBookmarks=true`));
    for (let waited = 0; server.openWatches().length < 2 && waited < 2000; waited += 10) await sleep(10);
    server.create({ metadata: { name: 'op' }, spec: { machineRef: 'n', operationKind: 'AgentUpgrade' } });
    const seen = await Promise.all(watches);
    expect(seen.every((events) => events.some((line) => line.startsWith('BOOKMARK')))).toBe(true);
    expect(server.watchEventsSent()).toBe(2);
  });

  it('keeps no bodies when told not to, expires watches past the history limit, and stamps times from `now`', async () => {
    await start({ recordRequestBodies: false, historyLimit: 2, now: () => Date.UTC(2030, 0, 1) });
    const from = server.resourceVersion();
    const op = server.create({ metadata: { name: 'op' }, spec: { machineRef: 'n', operationKind: 'AgentUpgrade' } });
    expect(op.metadata.creationTimestamp).toBe('2030-01-01T00:00:00Z');
    const second = server.resourceVersion();
    for (const phase of ['Pending', 'InProgress'])
      await call('PATCH', `${COLLECTION}/op/status`, { status: { phase } }, 'application/merge-patch+json');
    expect(server.requests.map((request) => [request.method, request.body])).toEqual([
      ['PATCH', undefined],
      ['PATCH', undefined],
    ]);
    expect(server.statusWrites('op')).toEqual([]);
    expect(await watched(`${COLLECTION}?watch=1&resourceVersion=${from}`)).toEqual(['ERROR']);
    expect(await watched(`${COLLECTION}?watch=1&resourceVersion=${second}&timeoutSeconds=1`)).toEqual([
      'MODIFIED op',
      'MODIFIED op',
    ]);
  });
});
