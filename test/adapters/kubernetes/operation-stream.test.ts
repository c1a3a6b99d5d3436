import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import {
  DEFAULT_STREAM_SETTINGS,
  KubernetesOperationStore,
} from '../../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { watchTimeoutSeconds, type StreamSettings } from '../../../src/adapters/node/kubernetes/stream-support.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import type { AgentUpgradeRequest } from '../../../src/ports/node/operation-store.js';
import { startFakeApiServer, type FakeApiServer, type KubeRequest } from '../../support/kube/fake-apiserver.js';
import { machineOperation, writeKubeconfig } from '../../support/kube/machine-operations.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { waitFor } from '../../support/wait-for.js';

const MACHINE = 'node-1';
const FAST = {
  idleTimeoutMs: 1_500,
  retryDelayMs: 50,
  retryDelayMaxMs: 200,
  watchTimeoutMinSeconds: 30,
  watchTimeoutMaxSeconds: 30,
};

/** Takes `count` requests from the stream (bounded), leaving the stream running. */
async function take(
  iterator: AsyncIterator<AgentUpgradeRequest>,
  count: number,
  timeoutMs = 10_000,
): Promise<string[]> {
  const names: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (names.length < count) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    const next = await Promise.race([
      iterator.next(),
      new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), remaining)),
    ]);
    if (next === 'timeout' || next.done === true) break;
    names.push(next.value.operation.name);
  }
  return names;
}

const isList = (request: KubeRequest): boolean =>
  request.method === 'GET' && request.query['watch'] === undefined && request.path.endsWith('/machineoperations');
const isWatchRequest = (request: KubeRequest): boolean => request.query['watch'] === 'true';

describe('the MachineOperation stream', () => {
  let server: FakeApiServer;
  let scratch: ReturnType<typeof makeScratch>;
  let stop: AbortController;
  let logger: RecordingLogger;

  async function storeFor(
    stream: Partial<Omit<StreamSettings, 'machineName'>> = {},
    options: { readonly selectable?: boolean; readonly clock?: Clock } = {},
  ): Promise<KubernetesOperationStore> {
    server = await startFakeApiServer({ selectableFields: options.selectable ?? true, bookmarkIntervalMs: 200 });
    const client = await KubeClient.connect(writeKubeconfig(scratch.root, server.origin));
    return new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: options.clock ?? new SystemClock(),
      logger,
      stream: { ...FAST, ...stream },
    });
  }

  beforeEach(() => {
    scratch = makeScratch();
    stop = new AbortController();
    logger = new RecordingLogger();
  });
  afterEach(async () => {
    stop.abort();
    await server?.close();
    scratch.cleanup();
  });

  it('delivers machineSelector operations while the server selects on spec.machineRef', async () => {
    const store = await storeFor();
    server.setNode(MACHINE, { pool: 'flex' });
    server.create(machineOperation('by-selector', null, { machineSelector: { matchLabels: { pool: 'flex' } } }));
    server.create(machineOperation('other-pool', null, { machineSelector: { matchLabels: { pool: 'gpu' } } }));
    server.create(machineOperation('by-ref', MACHINE));
    server.create(machineOperation('other-machine', 'node-2'));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect((await take(stream, 2)).sort()).toEqual(['by-ref', 'by-selector']);
    server.create(
      machineOperation('watched-selector', null, {
        machineSelector: { matchExpressions: [{ key: 'pool', operator: 'Exists' }] },
      }),
    );
    server.create(machineOperation('watched-other', 'node-2'));
    expect(await take(stream, 1)).toEqual(['watched-selector']);
    // Every list and watch was selected by the server: no scope ever received all operations.
    const reads = server.requests.filter((request) => isList(request) || isWatchRequest(request));
    expect(reads.length).toBeGreaterThanOrEqual(4);
    expect(new Set(reads.map((request) => request.query['fieldSelector']))).toEqual(
      new Set([`spec.machineRef=${MACHINE}`, 'spec.machineRef=']),
    );
  });

  it('falls back to client-side filtering when a watch is answered 400 for its field selector', async () => {
    const store = await storeFor();
    server.setNode(MACHINE, { pool: 'flex' });
    server.failNext({ method: 'GET', watch: true }, { status: 400 });
    server.create(machineOperation('listed', MACHINE));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect(await take(stream, 1)).toEqual(['listed']);
    expect(
      await waitFor(() => server.requests.filter(isList).some((r) => r.query['fieldSelector'] === undefined), 10_000),
    ).toBe(true);
    server.create(machineOperation('after-fallback', MACHINE));
    server.create(machineOperation('selector-after', null, { machineSelector: { matchLabels: { pool: 'flex' } } }));
    expect((await take(stream, 2)).sort()).toEqual(['after-fallback', 'selector-after']);
    const firstUnfiltered = server.requests.findIndex((r) => isList(r) && r.query['fieldSelector'] === undefined);
    // The lists had worked with the selector: it was the (refused) watch that made the stream fall back.
    const firstWatch = server.requests.findIndex(isWatchRequest);
    expect(server.requests[firstWatch]?.query['fieldSelector']).toBeDefined();
    expect(firstWatch).toBeLessThan(firstUnfiltered);
    expect(
      server.requests
        .slice(0, firstUnfiltered)
        .filter(isList)
        .every((r) => r.query['fieldSelector'] !== undefined),
    ).toBe(true);
    const later = server.requests.slice(firstUnfiltered).filter((r) => isList(r) || isWatchRequest(r));
    expect(later.every((request) => request.query['fieldSelector'] === undefined)).toBe(true);
    expect(later.some(isWatchRequest)).toBe(true);
  });

  it('asks every watch for its own timeout, drawn by the adapter from [min, max)', async () => {
    const draws = [0, 0.999, 0.5, 0.25];
    let draw = 0;
    const store = await storeFor({
      watchTimeoutMinSeconds: 300,
      watchTimeoutMaxSeconds: 600,
      random: () => draws[draw++ % draws.length] ?? 0,
    });
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    const pending = take(stream, 1, 15_000);
    for (let round = 0; round < 3; round += 1) {
      const watches = server.requests.filter(isWatchRequest).length;
      expect(await waitFor(() => server.openWatches().length === 2, 10_000)).toBe(true);
      server.dropWatches();
      expect(await waitFor(() => server.requests.filter(isWatchRequest).length >= watches + 2, 10_000)).toBe(true);
    }
    server.create(machineOperation('done', MACHINE));
    expect(await pending).toEqual(['done']);
    const timeouts = server.requests.filter(isWatchRequest).map((request) => Number(request.query['timeoutSeconds']));
    expect(timeouts.every((seconds) => seconds >= 300 && seconds < 600)).toBe(true);
    expect(new Set(timeouts).size).toBeGreaterThan(1);
  });

  it('draws watch timeouts and defaults as documented', () => {
    const settings = (random: number) => ({ ...DEFAULT_STREAM_SETTINGS, machineName: MACHINE, random: () => random });
    expect([0, 0.5, 0.999_999].map((random) => watchTimeoutSeconds(settings(random)))).toEqual([300, 450, 599]);
    expect(watchTimeoutSeconds({ ...settings(0.7), watchTimeoutMinSeconds: 30, watchTimeoutMaxSeconds: 30 })).toBe(30);
    expect(DEFAULT_STREAM_SETTINGS.unauthorized).toEqual({ attempts: 5, windowMs: 180_000 });
  });

  it.each([
    [0, (ceilingMs: number) => ceilingMs / 2],
    [0.5, (ceilingMs: number) => (ceilingMs * 3) / 4],
  ])('backs off exponentially with jitter from the adapter (random %s)', async (random, expected) => {
    const store = await storeFor({ retryDelayMs: 40, retryDelayMaxMs: 160, random: () => random });
    server.failNext({ method: 'GET', watch: false }, { status: 503, times: 8 });
    server.create(machineOperation('eventually', MACHINE));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect(await take(stream, 1)).toEqual(['eventually']);
    const retries = logger.lines.filter((line) => line.level === 'warn' && line.fields['attempt'] !== undefined);
    expect(retries.length).toBe(8);
    for (const line of retries) {
      const attempt = line.fields['attempt'] as number;
      expect(line.fields['delayMs']).toBe(Math.round(expected(Math.min(160, 40 * 2 ** (attempt - 1)))));
    }
  });

  it('keeps lastTransitionTime while the Completed status stays, and every other condition', async () => {
    let nowMs = Date.parse('2030-01-01T00:00:00Z');
    // Only the wall clock is set by hand: it stamps the conditions' lastTransitionTime.
    const clock: Clock = Object.assign(new SystemClock(), { nowMs: () => nowMs });
    const store = await storeFor({}, { clock });
    const scheduled = {
      type: 'Scheduled',
      status: 'True',
      reason: 'Picked',
      message: 'by the controller',
      lastTransitionTime: '2029-12-31T00:00:00Z',
    };
    const failing = server.create(machineOperation('failing', MACHINE, { status: { conditions: [scheduled] } }));
    const passing = server.create(machineOperation('passing', MACHINE));
    const conditions = (name: string) =>
      (server.get(name)?.status as { conditions: Record<string, unknown>[] }).conditions;

    await store.markInProgress({ name: 'failing', uid: failing.metadata.uid ?? null }, 'working');
    await store.markInProgress({ name: 'passing', uid: passing.metadata.uid ?? null }, 'working');
    nowMs += 60_000;
    await store.publish(
      { name: 'failing', uid: failing.metadata.uid ?? null },
      { phase: 'Failed', reason: 'ExecutionFailed', message: 'no' },
    );
    await store.publish(
      { name: 'passing', uid: passing.metadata.uid ?? null },
      { phase: 'Complete', reason: 'Succeeded', message: 'AgentUpgrade completed' },
    );
    expect(conditions('failing')).toEqual([
      scheduled,
      expect.objectContaining({
        type: 'Completed',
        status: 'False',
        reason: 'ExecutionFailed',
        lastTransitionTime: '2030-01-01T00:00:00.000Z',
      }),
    ]);
    expect(conditions('passing')).toEqual([
      expect.objectContaining({
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        lastTransitionTime: '2030-01-01T00:01:00.000Z',
      }),
    ]);
  });
});
