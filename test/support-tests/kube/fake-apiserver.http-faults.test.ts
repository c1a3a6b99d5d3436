// The fake at the HTTP level: fault injection, request bookkeeping and shutdown.

import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeApiServer,
  type FakeApiServerOptions,
  startFakeApiServer,
} from '../../support/kube/fake-apiserver.js';
import { COLLECTION, sleep, within } from './client-helpers.js';
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
