// The fake driven by the real @kubernetes/client-node 1.4.0 client: what the daemon will see.

import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { apiFailure, coords, customObjects, eventually, sleep, WatchRecorder, within } from './client-helpers.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let server: FakeApiServer;
const watches: WatchRecorder[] = [];

async function start(options?: FakeApiServerOptions): Promise<FakeApiServer> {
  server = await startFakeApiServer(options);
  return server;
}

async function watch(query: Record<string, string | number | boolean | undefined>): Promise<WatchRecorder> {
  const w = await WatchRecorder.start(server.origin, query);
  watches.push(w);
  return w;
}

const upgrade = (name: string, machineRef: string) => ({
  metadata: { name },
  spec: { machineRef, operationKind: 'AgentUpgrade', parameters: { downloadURL: 'https://example.test/agent.tar.gz' } },
});

const condition = (type: string, status: string) => ({
  type,
  status,
  reason: 'Testing',
  lastTransitionTime: '2024-01-01T00:00:00Z',
});

afterEach(async () => {
  for (const w of watches.splice(0)) w.abort();
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

describe('watch', () => {
  it('delivers ADDED, MODIFIED and DELETED in order from a resourceVersion', async () => {
    await start();
    const api = customObjects(server.origin);
    const list = (await api.listClusterCustomObject({ ...coords })) as { metadata: { resourceVersion: string } };
    const w = await watch({
      resourceVersion: list.metadata.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: 30,
    });

    server.create(upgrade('op-a', 'node-1'));
    await api.patchClusterCustomObjectStatus(
      { ...coords, name: 'op-a', body: { status: { phase: 'InProgress' } } },
      mergePatch,
    );
    server.delete('op-a');
    await w.until((events) => events.some((e) => e.type === 'DELETED'));

    expect(w.summary()).toEqual(['ADDED op-a', 'MODIFIED op-a', 'DELETED op-a']);
    const rvs = w.events.filter((e) => e.type !== 'BOOKMARK').map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(w.events.find((e) => e.type === 'MODIFIED')?.object.status).toEqual({ phase: 'InProgress' });
    expect(w.doneCalls).toBe(0);
  });

  it('replays the events after the given resourceVersion before live ones', async () => {
    await start();
    const a = server.create(upgrade('op-a', 'node-1'));
    server.create(upgrade('op-b', 'node-1'));
    server.delete('op-a');

    const w = await watch({ resourceVersion: a.metadata.resourceVersion });
    server.create(upgrade('op-c', 'node-1'));
    await w.until((events) => events.length === 3);

    expect(w.summary()).toEqual(['ADDED op-b', 'DELETED op-a', 'ADDED op-c']);
  });

  it('starts with synthetic ADDED events for the current state when no resourceVersion is given', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    const b = server.create(upgrade('op-b', 'node-1'));
    server.delete('op-a');

    const w = await watch({ resourceVersion: '0' });
    await w.until((events) => events.length === 1);
    expect(w.summary()).toEqual(['ADDED op-b']);
    expect(w.events[0]?.object).toEqual(b);
  });

  it('sends BOOKMARK events carrying the current resourceVersion', async () => {
    await start({ bookmarkIntervalMs: 30 });
    server.create(upgrade('op-a', 'node-1'));
    const w = await watch({ resourceVersion: server.resourceVersion(), allowWatchBookmarks: true });

    await w.until((events) => events.some((e) => e.type === 'BOOKMARK'));

    expect(w.events[0]).toEqual({
      type: 'BOOKMARK',
      object: {
        kind: 'MachineOperation',
        apiVersion: 'unbounded-cloud.io/v1alpha3',
        metadata: { resourceVersion: server.resourceVersion() },
      },
    });
  });

  it('sends no BOOKMARK events unless allowed', async () => {
    await start({ bookmarkIntervalMs: 20 });
    const w = await watch({ resourceVersion: server.resourceVersion() });
    await sleep(150);
    expect(w.events).toEqual([]);
  });

  it('reports a compacted resourceVersion as an ERROR 410 Expired event, then ends the stream', async () => {
    await start();
    const a = server.create(upgrade('op-a', 'node-1'));
    server.compact();

    const w = await watch({ resourceVersion: a.metadata.resourceVersion, allowWatchBookmarks: true });
    const err = await within(w.done);

    expect(err).toBeNull();
    expect(w.events).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'too old resource version',
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
  });

  it('lets a client that relists after compaction watch again from the new list', async () => {
    await start();
    server.create(upgrade('op-a', 'node-1'));
    server.compact();
    const list = (await customObjects(server.origin).listClusterCustomObject({ ...coords })) as {
      metadata: { resourceVersion: string };
    };

    const w = await watch({ resourceVersion: list.metadata.resourceVersion });
    server.create(upgrade('op-b', 'node-1'));
    await w.until((events) => events.length === 1);
    expect(w.summary()).toEqual(['ADDED op-b']);
  });

  it('filters watch events by the spec.machineRef field selector', async () => {
    await start();
    const rv = server.resourceVersion();
    const w = await watch({ resourceVersion: rv, fieldSelector: 'spec.machineRef=node-1' });

    server.create(upgrade('op-a', 'node-2'));
    server.create(upgrade('op-b', 'node-1'));
    server.delete('op-a');
    server.delete('op-b');
    await w.until((events) => events.length === 2);

    expect(w.summary()).toEqual(['ADDED op-b', 'DELETED op-b']);
    expect(server.openWatches()).toEqual([
      {
        resource: 'machineoperations',
        query: expect.objectContaining({ fieldSelector: 'spec.machineRef=node-1', watch: 'true' }),
        silenced: false,
      },
    ]);
  });

  it('answers a spec.machineRef watch with HTTP 400 when selectableFields is off', async () => {
    await start({ selectableFields: false });
    const w = await watch({ resourceVersion: '0', fieldSelector: 'spec.machineRef=node-1' });
    const err = (await within(w.done)) as { statusCode?: number };
    expect(err.statusCode).toBe(400);
    expect(w.events).toEqual([]);
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    await start();
    const w = await watch({ resourceVersion: server.resourceVersion(), timeoutSeconds: 1 });
    expect(await within(w.done, 3000)).toBeNull();
    await eventually(() => server.openWatches().length === 0); // the server side closes asynchronously
  });

  it('dropWatches() tears the connection down and the client calls done', async () => {
    await start();
    const w = await watch({ resourceVersion: server.resourceVersion(), allowWatchBookmarks: true });
    expect(server.openWatches()).toHaveLength(1);

    server.dropWatches();
    await within(w.done);

    expect(w.doneCalls).toBe(1);
    await eventually(() => server.openWatches().length === 0);
  });

  it('silenceWatches() keeps the connection open but delivers nothing more', async () => {
    await start({ bookmarkIntervalMs: 20 });
    const w = await watch({ resourceVersion: server.resourceVersion(), allowWatchBookmarks: true, timeoutSeconds: 1 });
    await w.until((events) => events.length > 0);

    server.silenceWatches();
    const seen = w.events.length;
    server.create(upgrade('op-a', 'node-1'));
    await sleep(1300); // past the bookmark interval and timeoutSeconds

    expect(w.events).toHaveLength(seen);
    expect(w.doneCalls).toBe(0);
    expect(server.openWatches()).toEqual([expect.objectContaining({ silenced: true })]);

    w.abort();
    await within(w.done);
  });

  it('answers an injected watch failure with that HTTP status', async () => {
    await start();
    server.failNext({ watch: true }, { status: 500 });
    const w = await watch({ resourceVersion: '0' });
    const err = (await within(w.done)) as { statusCode?: number };
    expect(err.statusCode).toBe(500);
  });
});
