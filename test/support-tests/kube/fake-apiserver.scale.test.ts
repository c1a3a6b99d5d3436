// The fake at the size of the rollout simulation: 10,000 Nodes and 10,000 MachineOperations in
// one process, listed in pages of 500 as an informer lists them, watched from a list's
// resourceVersion while every Node and operation changes, with request bodies not recorded and a
// bounded watch history. Asserts what a client must see (every object once, every change once,
// in order); the timings are printed and bounded only loosely, so a slow machine does not fail it.

import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeApiServer, startFakeApiServer } from '../../support/kube/fake-apiserver.js';
import { COLLECTION, sleep } from './client-helpers.js';

const COUNT = 10_000;
const PAGE = 500;
const nodeName = (index: number): string => `node-${String(index).padStart(5, '0')}`;

let server: FakeApiServer;

function get(path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.origin}${path}`, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end();
  });
}

interface Page {
  readonly items: { readonly metadata: { readonly name: string } }[];
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
}

/** Every page of `path`, as an informer's relist reads it (bounded by the page count). */
async function listAll(path: string): Promise<{ names: string[]; resourceVersion: string; pages: number }> {
  const names: string[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  for (let pages = 1; pages <= COUNT / PAGE + 1; pages += 1) {
    const continued = token === undefined ? '' : `&continue=${encodeURIComponent(token)}`;
    const page = (await get(`${path}?limit=${PAGE}${continued}`)) as Page;
    names.push(...page.items.map((item) => item.metadata.name));
    resourceVersion ||= page.metadata.resourceVersion;
    token = page.metadata.continue;
    if (token === undefined) return { names, resourceVersion, pages };
  }
  throw new Error(`${path} did not end within ${COUNT / PAGE + 1} pages`);
}

/** Reads a watch stream until `wanted` object events arrived (or 30 s passed), then hangs up. */
function watchUntil(path: string, wanted: number): Promise<{ types: string[]; names: string[] }> {
  return new Promise((resolve, reject) => {
    const seen = { types: [] as string[], names: [] as string[] };
    let buffered = '';
    const req = httpRequest(`${server.origin}${path}`, { agent: false }, (res) => {
      const timer = setTimeout(() => req.destroy(), 30_000);
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const event = JSON.parse(line) as { type: string; object: { metadata: { name: string } } };
          if (event.type === 'BOOKMARK') continue;
          seen.types.push(event.type);
          seen.names.push(event.object.metadata.name);
        }
        if (seen.types.length >= wanted) {
          clearTimeout(timer);
          req.destroy();
          resolve(seen);
        }
      });
      res.on('close', () => {
        clearTimeout(timer);
        resolve(seen);
      });
    });
    req.on('error', (error) => (seen.types.length >= wanted ? resolve(seen) : reject(error)));
    req.end();
  });
}

beforeAll(async () => {
  server = await startFakeApiServer({ recordRequestBodies: false, historyLimit: COUNT });
  const startedMs = Date.now();
  for (let index = 0; index < COUNT; index += 1) {
    const name = nodeName(index);
    server.setNode(name, { 'kubernetes.io/arch': index % 2 === 0 ? 'amd64' : 'arm64', pool: 'fleet' });
    server.create({
      metadata: { name: `upgrade-${name}`, labels: { 'agent-upgrade.dev/rollout': 'fleet' } },
      spec: { machineRef: name, operationKind: 'AgentUpgrade', parameters: { downloadURL: 'https://h/a.tgz' } },
    });
  }
  process.stdout.write(`seeded ${COUNT} Nodes and ${COUNT} operations in ${Date.now() - startedMs} ms\n`);
}, 120_000);

afterAll(async () => {
  await server.close();
});

describe('the fake at 10,000 Nodes and 10,000 MachineOperations', () => {
  it('lists every Node and every operation once, in name order, in pages of 500, well under a second each', async () => {
    for (const [path, prefix] of [
      ['/api/v1/nodes', ''],
      [COLLECTION, 'upgrade-'],
    ] as const) {
      const startedMs = Date.now();
      const listed = await listAll(path);
      const tookMs = Date.now() - startedMs;
      process.stdout.write(`listed ${listed.names.length} from ${path} in ${listed.pages} pages, ${tookMs} ms\n`);
      expect(listed.pages).toBe(COUNT / PAGE);
      expect(listed.names).toEqual(Array.from({ length: COUNT }, (_, index) => `${prefix}${nodeName(index)}`));
      expect(tookMs).toBeLessThan(10_000);
    }
  });

  it('delivers every change to a watch from the list resourceVersion, once and in order, and counts it', async () => {
    const { resourceVersion } = await listAll('/api/v1/nodes');
    const sentBefore = server.watchEventsSent();
    const watched = watchUntil(
      `/api/v1/nodes?watch=1&resourceVersion=${resourceVersion}&labelSelector=pool%3Dfleet`,
      COUNT + 1,
    );
    // Every change must find the watch open: 10,001 of them outgrow the history the replay would need.
    for (let waited = 0; server.openWatches().length === 0 && waited < 5_000; waited += 10) await sleep(10);
    const startedMs = Date.now();
    for (let index = 0; index < COUNT; index += 1)
      server.setNode(nodeName(index), { 'kubernetes.io/arch': 'amd64', pool: 'fleet' }, { version: '1.4.2' });
    server.deleteNode(nodeName(0));
    const seen = await watched;
    process.stdout.write(`watched ${seen.types.length} Node events in ${Date.now() - startedMs} ms\n`);
    expect(seen.types.slice(0, COUNT).every((type) => type === 'MODIFIED')).toBe(true);
    expect(seen.names.slice(0, COUNT)).toEqual(Array.from({ length: COUNT }, (_, index) => nodeName(index)));
    expect([seen.types.at(-1), seen.names.at(-1)]).toEqual(['DELETED', nodeName(0)]);
    expect(server.watchEventsSent() - sentBefore).toBeGreaterThanOrEqual(COUNT + 1);
    expect(server.inFlightRequests()).toBe(0);
  });

  it('keeps no request bodies and a bounded history: 20,001 Node changes outgrew it, so a watch from the start expires', async () => {
    expect(server.requests.every((request) => request.body === undefined)).toBe(true);
    const expired = await watchUntil('/api/v1/nodes?watch=1&resourceVersion=3', 1);
    expect(expired.types).toEqual(['ERROR']);
  });
});
