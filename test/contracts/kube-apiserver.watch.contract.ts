/**
 * The read half of the kube-apiserver conformance suite (kube-apiserver.contract.ts registers it):
 * field selectors, a resourceVersion from the future, watches (bookmarks, an expired
 * resourceVersion, selector membership) and authentication. Watches run with a short
 * timeoutSeconds and are read once the server ends them, so every wait is bounded by the server.
 */
import { describe, expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import {
  expiredForClient,
  type KubeResponse,
  OPS,
  rv,
  statusShape,
  upgrade,
  watchEvents,
  type Operation,
} from './kube-apiserver.support.js';

const WATCH_SECONDS = 3;
const settle = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

function names(answer: KubeResponse): string[] {
  return ((answer.json as { items?: Operation[] }).items ?? []).map((op) => op.metadata.name).sort();
}

async function listVersion(suite: Suite): Promise<string> {
  const listed = await suite.api.admin('GET', OPS);
  expect(listed.status, listed.text).toBe(200);
  return (listed.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** A watch with `query` that the server ends after WATCH_SECONDS; resolves with the whole stream. */
function watch(suite: Suite, query: string): Promise<KubeResponse> {
  return suite.api.admin('GET', `${OPS}?watch=1&timeoutSeconds=${WATCH_SECONDS}&${query}`, {
    timeoutMs: (WATCH_SECONDS + 10) * 1000,
  });
}

function selectorCases(suite: Suite): void {
  it('selects on spec.machineRef and metadata.name; spec.machineRef= selects the operations without one', async () => {
    await suite.create('sel-a', upgrade('sel-node-a'));
    await suite.create('sel-b', upgrade('sel-node-b'));
    await suite.create('sel-selector', {
      operationKind: 'AgentUpgrade',
      machineSelector: { matchLabels: { pool: 'sel' } },
    });
    const select = (selector: string) => suite.api.admin('GET', `${OPS}?fieldSelector=${encodeURIComponent(selector)}`);
    expect(names(await select('spec.machineRef=sel-node-a'))).toEqual(['sel-a']);
    expect(names(await select('metadata.name=sel-b'))).toEqual(['sel-b']);
    expect(names(await select('spec.machineRef=,metadata.name=sel-selector'))).toEqual(['sel-selector']);
    expect(names(await select('spec.machineRef!=sel-node-a,metadata.name!=sel-a'))).not.toContain('sel-a');
  });

  it('answers a field the resource cannot select on with 400, metadata.namespace included (it is cluster-scoped)', async () => {
    for (const selector of ['metadata.namespace=default', 'metadata.namespace=', 'status.phase=Pending']) {
      const listed = await suite.api.admin('GET', `${OPS}?fieldSelector=${encodeURIComponent(selector)}`);
      expect(listed.status, selector).toBe(400);
      expect(statusShape(listed)).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
      const watched = await suite.api.admin('GET', `${OPS}?watch=1&fieldSelector=${encodeURIComponent(selector)}`);
      expect(watched.status, selector).toBe(400);
    }
  });

  it('answers a list at a resourceVersion the server has not reached with 504 and retryAfterSeconds, after waiting', async () => {
    const future = Number(await listVersion(suite)) + 1_000_000;
    const startedMs = Date.now();
    const answer = await suite.api.admin('GET', `${OPS}?resourceVersion=${future}`, { timeoutMs: 20_000 });
    const waitedMs = Date.now() - startedMs;
    expect(answer.status, answer.text).toBe(504);
    expect(statusShape(answer)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Timeout',
      code: 504,
      details: { retryAfterSeconds: 1 },
    });
    expect((answer.json as { details: { causes: { reason: string }[] } }).details.causes.map((c) => c.reason)).toEqual([
      'ResourceVersionTooLarge',
    ]);
    expect(waitedMs).toBeGreaterThanOrEqual(2_500);
    expect(waitedMs).toBeLessThan(15_000);
  });

  it('answers a request without credentials with 401', async () => {
    const answer = await suite.api.anonymous('GET', OPS);
    expect(answer.status).toBe(401);
    expect(statusShape(answer)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });
}

function labelCases(suite: Suite): void {
  it('selects operations by label in lists and watches, set-based terms included; a DELETE by name ends one', async () => {
    const from = await listVersion(suite);
    const labelled = (name: string, labels: Record<string, string>) =>
      suite.create(name, upgrade('node-a'), { metadata: { name, labels } });
    await labelled('lab-canary', { 'contract/rollout': 'fleet', 'contract/wave': 'canary' });
    await labelled('lab-rest', { 'contract/rollout': 'fleet', 'contract/wave': 'rest' });
    await labelled('lab-other', { 'contract/rollout': 'other' });
    const select = async (selector: string) =>
      names(await suite.api.admin('GET', `${OPS}?labelSelector=${encodeURIComponent(selector)}`));
    expect(await select('contract/rollout=fleet')).toEqual(['lab-canary', 'lab-rest']);
    expect(await select('contract/wave in (canary,early)')).toEqual(['lab-canary']);
    expect(await select('contract/rollout,contract/wave notin (canary)')).toEqual(['lab-other', 'lab-rest']);
    expect(await select('contract/rollout!=fleet,contract/rollout')).toEqual(['lab-other']);
    expect((await suite.api.admin('GET', `${OPS}?labelSelector=${encodeURIComponent('a b c')}`)).status).toBe(400);
    expect((await suite.api.admin('DELETE', `${OPS}/lab-rest`)).status).toBe(200);
    const answer = await watch(
      suite,
      `resourceVersion=${from}&labelSelector=${encodeURIComponent('contract/rollout=fleet')}`,
    );
    const events = watchEvents(answer).filter((event) => event.type !== 'BOOKMARK');
    expect(events.map((event) => [event.type, event.object.metadata.name])).toEqual([
      ['ADDED', 'lab-canary'],
      ['ADDED', 'lab-rest'],
      ['DELETED', 'lab-rest'],
    ]);
  });
}

function watchCases(suite: Suite): void {
  it('sends a BOOKMARK before the deadline when allowed and the server moved on, and none when not allowed', async () => {
    const from = await listVersion(suite);
    const query = `resourceVersion=${from}&fieldSelector=spec.machineRef%3Dbookmark-node`;
    const allowed = watch(suite, `${query}&allowWatchBookmarks=true`);
    const plain = watch(suite, query);
    await settle(500);
    // A write the selector hides: the stream has nothing to say, but the server has moved on.
    const elsewhere = await suite.create('bookmark-elsewhere', upgrade('other-node'));
    const bookmarks = watchEvents(await allowed).filter((event) => event.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThan(0);
    expect(bookmarks.every((event) => event.object.kind === 'MachineOperation')).toBe(true);
    expect(Math.max(...bookmarks.map((event) => rv(event.object)))).toBeGreaterThanOrEqual(rv(elsewhere));
    expect(watchEvents(await plain)).toEqual([]);
  });

  it('tells a watch from a resourceVersion it no longer has that it expired (410), whichever way it says it', async () => {
    await suite.create('expired-probe', upgrade('node-a'));
    const answer = await watch(suite, 'resourceVersion=1');
    expect([200, 410]).toContain(answer.status);
    expect(expiredForClient(answer)).toBe(true);
    expect(watchEvents(answer).filter((event) => event.type !== 'ERROR' && event.type !== 'BOOKMARK')).toEqual([]);
  });

  it('sends DELETED when an operation leaves the watched selector and ADDED when one joins', async () => {
    await suite.create('member-leaves', upgrade('member-node'));
    await suite.create('member-joins', upgrade('member-elsewhere'));
    const from = await listVersion(suite);
    const left = (await suite.patch('member-leaves', { spec: { machineRef: 'member-elsewhere' } })).json as Operation;
    const joined = (await suite.patch('member-joins', { spec: { machineRef: 'member-node' } })).json as Operation;
    const status = (await suite.patch('member-joins', { status: { phase: 'InProgress' } }, '/status'))
      .json as Operation;
    expect((await suite.api.admin('DELETE', `${OPS}/member-joins`)).status).toBe(200);
    // From an explicit resourceVersion the watch replays all of it, however late it connects.
    const answer = await watch(suite, `resourceVersion=${from}&fieldSelector=spec.machineRef%3Dmember-node`);
    const events = watchEvents(answer).filter((event) => event.type !== 'BOOKMARK');
    expect(events.map((event) => [event.type, event.object.metadata.name])).toEqual([
      ['DELETED', 'member-leaves'],
      ['ADDED', 'member-joins'],
      ['MODIFIED', 'member-joins'],
      ['DELETED', 'member-joins'],
    ]);
    expect(events.slice(0, 3).map((event) => rv(event.object))).toEqual([rv(left), rv(joined), rv(status)]);
    expect(rv(events[3]?.object ?? status)).toBeGreaterThan(rv(status));
    // Leaving, the object is sent as it last matched; joining, as it is now.
    expect(events[0]?.object.spec['machineRef']).toBe('member-node');
    expect(events[1]?.object.spec['machineRef']).toBe('member-node');
  });

  it('starts a watch without a resourceVersion with ADDED for each matching object, then streams changes', async () => {
    await suite.create('initial-a', upgrade('initial-node'));
    await suite.create('initial-b', upgrade('initial-other'));
    const answer = watch(suite, 'fieldSelector=spec.machineRef%3Dinitial-node');
    await settle(500);
    const modified = (await suite.patch('initial-a', { status: { phase: 'InProgress' } }, '/status')).json as Operation;
    const events = watchEvents(await answer).filter((event) => event.type !== 'BOOKMARK');
    expect(events.map((event) => [event.type, event.object.metadata.name])).toEqual([
      ['ADDED', 'initial-a'],
      ['MODIFIED', 'initial-a'],
    ]);
    expect(rv(events[1]?.object ?? modified)).toBe(rv(modified));
  });
}

/** The reads, selectors and watches of the suite, against the target `suite` holds. */
export function readContract(suite: Suite): void {
  describe('reads: field selectors, resourceVersions, authentication', () => selectorCases(suite));
  describe('watches: bookmarks, expiry, selector membership', () => watchCases(suite));
  describe('reads: label selectors', () => labelCases(suite));
}
