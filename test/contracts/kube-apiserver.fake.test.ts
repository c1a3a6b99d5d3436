/**
 * The kube-apiserver conformance suite against the project's fake API server, authenticating with
 * a bearer token as a client would. Bookmarks are set to a real server's minute, so the suite sees
 * the bookmark a real server sends at the deadline rather than the fake's fast periodic ones. The
 * last cases hold the fake's injected faults to the observables the suite pins for a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type JsonObject } from '../support/kube/fake-apiserver.js';
import { kubeApiServerContract } from './kube-apiserver.contract.js';
import { NODES } from './kube-apiserver.objects.js';
import { expiredForClient, fakeRequest, OPS, operation, upgrade } from './kube-apiserver.support.js';

const TOKEN = 'conformance-token';

kubeApiServerContract('the fake API server', async () => {
  const server = await startFakeApiServer({ tokens: [TOKEN], bookmarkIntervalMs: 60_000 });
  return {
    target: {
      kind: 'fake',
      admin: (method, path, options) => fakeRequest(server.origin, TOKEN, method, path, options),
      anonymous: (method, path) => fakeRequest(server.origin, null, method, path),
    },
    stop: () => server.close(),
  };
});

describe('the fake API server: faults on demand, seen as a client sees a real server', () => {
  let server: FakeApiServer;
  const admin = (method: string, path: string, body?: unknown) =>
    fakeRequest(server.origin, TOKEN, method, path, body === undefined ? {} : { body });
  beforeAll(async () => {
    server = await startFakeApiServer({ tokens: [TOKEN] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('410 at will, as HTTP 410 or as an ERROR event after compact(): both are "expired" for a client', async () => {
    const created = await admin('POST', OPS, operation('faulted', upgrade('node-a')));
    expect(created.status).toBe(201);
    const from = (created.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    server.failNext({ watch: true }, { status: 410 });
    const injected = await admin('GET', `${OPS}?watch=1&resourceVersion=${from}&timeoutSeconds=1`);
    expect(injected.status).toBe(410);
    expect(expiredForClient(injected)).toBe(true);
    server.compact();
    const compacted = await admin('GET', `${OPS}?watch=1&resourceVersion=${from}&timeoutSeconds=1`);
    expect(compacted.status).toBe(200);
    expect(expiredForClient(compacted)).toBe(true);
  });

  it('expires a Node watch from before a compaction as the MachineOperation watch does', async () => {
    server.setNode('expiring-node', { pool: 'a' });
    const from = server.resourceVersion();
    server.setNode('expiring-node', { pool: 'b' });
    server.compact();
    const answer = await admin('GET', `${NODES}?watch=1&resourceVersion=${from}&timeoutSeconds=1`);
    expect(answer.status).toBe(200);
    expect(expiredForClient(answer)).toBe(true);
    const relisted = (await admin('GET', NODES)).json as { metadata: { resourceVersion: string } };
    const resumed = await admin(
      'GET',
      `${NODES}?watch=1&resourceVersion=${relisted.metadata.resourceVersion}&timeoutSeconds=1`,
    );
    expect(expiredForClient(resumed)).toBe(false);
  });

  it('refuses an invalid seeded operation as the real server refuses the create', () => {
    expect(() => server.create(operation('Bad_Name', upgrade('node-a')) as never)).toThrow();
    expect(() =>
      server.create({
        metadata: { name: 'seeded' },
        spec: upgrade('node-a') as JsonObject,
        status: { phase: 'Bogus' },
      }),
    ).toThrow();
    expect(
      server.create({
        metadata: { name: 'seeded' },
        spec: upgrade('node-a') as JsonObject,
        status: { phase: 'Complete' },
      }).status,
    ).toEqual({
      phase: 'Complete',
    });
  });
});
