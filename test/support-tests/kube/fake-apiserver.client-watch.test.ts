// The fake driven by the real @kubernetes/client-node 1.4.0 client: what the daemon will see.
// Here: watches, bookmarks, expiry and the fake's watch controls.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import {
  coords,
  customObjects,
  eventually,
  mergePatch,
  sleep,
  upgrade,
  WatchRecorder,
  within,
} from './client-helpers.js';

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

afterEach(async () => {
  for (const w of watches.splice(0)) w.abort();
  await server.close();
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
