import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import type { AgentUpgradeRequest } from '../../../src/ports/node/operation-store.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { machineOperation, writeKubeconfig } from '../../support/kube/machine-operations.js';

const MACHINE = 'node-1';
const FAST = {
  idleTimeoutMs: 1_500,
  retryDelayMs: 50,
  retryDelayMaxMs: 200,
  watchTimeoutMinSeconds: 30,
  watchTimeoutMaxSeconds: 30,
  listPageSize: 2,
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

describe('KubernetesOperationStore against a protocol-faithful API server', () => {
  let server: FakeApiServer;
  let scratch: ReturnType<typeof makeScratch>;
  let stop: AbortController;
  let logger: RecordingLogger;

  async function storeFor(selectable = true): Promise<KubernetesOperationStore> {
    server = await startFakeApiServer({ selectableFields: selectable, bookmarkIntervalMs: 200 });
    const client = await KubeClient.connect(writeKubeconfig(scratch.root, server.origin));
    return new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: new SystemClock(),
      logger,
      stream: FAST,
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

  it('yields only Pending AgentUpgrade operations for this machine, listed or watched, once each', async () => {
    const store = await storeFor();
    server.create(machineOperation('before', MACHINE));
    server.create(machineOperation('other-machine', 'node-2'));
    server.create(machineOperation('reboot', MACHINE, { operationKind: 'NodeReboot' }));
    server.create(machineOperation('done', MACHINE, { status: { phase: 'Complete' } }));
    server.create(machineOperation('running', MACHINE, { status: { phase: 'InProgress' } }));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect(await take(stream, 1)).toEqual(['before']);
    server.create(machineOperation('after', MACHINE));
    server.create(machineOperation('after-other', 'node-3'));
    expect(await take(stream, 1)).toEqual(['after']);
    // A status change of an operation already delivered does not deliver it again.
    await store.markInProgress({ name: 'after', uid: server.get('after')?.metadata.uid ?? null }, 'working');
    server.create(machineOperation('third', MACHINE));
    expect(await take(stream, 1)).toEqual(['third']);
    // Two scopes, both selected by the server: this machine's operations and those without a machineRef.
    const watches = server.requests.filter((request) => request.query['watch'] === 'true');
    expect(new Set(watches.map((request) => request.query['fieldSelector']))).toEqual(
      new Set([`spec.machineRef=${MACHINE}`, 'spec.machineRef=']),
    );
  });

  it('filters client-side when the server has no selectable field, and then matches machineSelector operations by Node labels', async () => {
    const store = await storeFor(false);
    server.setNode(MACHINE, { pool: 'flex' });
    server.create(machineOperation('by-selector', null, { machineSelector: { matchLabels: { pool: 'flex' } } }));
    server.create(machineOperation('other-pool', null, { machineSelector: { matchLabels: { pool: 'gpu' } } }));
    server.create(machineOperation('by-ref', MACHINE));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect((await take(stream, 2)).sort()).toEqual(['by-ref', 'by-selector']);
    const lists = server.requests.filter(
      (request) =>
        request.method === 'GET' && request.query['watch'] === undefined && request.path.endsWith('/machineoperations'),
    );
    expect(lists[0]?.query['fieldSelector']).toBe(`spec.machineRef=${MACHINE}`);
    expect(lists.at(-1)?.query['fieldSelector']).toBeUndefined();
  });

  it('re-watches after a dropped stream and relists after 410 Gone, without losing or repeating an operation', async () => {
    const store = await storeFor();
    server.create(machineOperation('first', MACHINE));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect(await take(stream, 1)).toEqual(['first']);
    server.dropWatches();
    server.create(machineOperation('after-drop', MACHINE));
    expect(await take(stream, 1)).toEqual(['after-drop']);
    server.compact();
    server.dropWatches();
    server.create(machineOperation('after-compaction', MACHINE));
    expect(await take(stream, 1)).toEqual(['after-compaction']);
    expect(await take(stream, 1, 1_000)).toEqual([]);
  });

  it('notices a silent stream with its watchdog and re-watches from the last resourceVersion', async () => {
    const store = await storeFor();
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    const first = take(stream, 1, 15_000);
    await new Promise((done) => setTimeout(done, 300));
    server.silenceWatches();
    server.create(machineOperation('while-silent', MACHINE));
    expect(await first).toEqual(['while-silent']);
  });

  it('keeps retrying a failing API server with backoff', async () => {
    const store = await storeFor();
    server.failNext({ method: 'GET', watch: false }, { status: 500, times: 3 });
    server.create(machineOperation('eventually', MACHINE));
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect(await take(stream, 1)).toEqual(['eventually']);
  });

  it('writes InProgress and one terminal status by merge-patch, re-reading through 409s', async () => {
    const store = await storeFor();
    const created = server.create(machineOperation('op', MACHINE));
    const ref = { name: 'op', uid: created.metadata.uid ?? null };
    server.conflictNext(3);
    expect(await store.markInProgress(ref, 'staging')).toEqual({ kind: 'written' });
    expect(server.get('op')?.status).toMatchObject({ phase: 'InProgress', message: 'staging' });
    const done = { phase: 'Complete', reason: 'Succeeded', message: 'AgentUpgrade completed' } as const;
    expect(await store.publish(ref, done)).toEqual({ kind: 'written' });
    expect(await store.publish(ref, done)).toEqual({ kind: 'written' });
    expect(await store.publish(ref, { phase: 'Failed', reason: 'DaemonFailed', message: 'late' })).toEqual({
      kind: 'written',
    });
    expect(await store.markInProgress(ref, 'again')).toEqual({ kind: 'written' });
    const status = server.get('op')?.status as {
      phase: string;
      conditions: { type: string; status: string; reason: string }[];
      completedAt?: string;
      startedAt?: string;
    };
    expect(status.phase).toBe('Complete');
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'Completed', status: 'True', reason: 'Succeeded' }),
    ]);
    expect(typeof status.startedAt === 'string' && typeof status.completedAt === 'string').toBe(true);
    expect(server.statusWrites('op').map((written) => (written as { phase?: string }).phase)).toEqual([
      'InProgress',
      'Complete',
    ]);
  });

  it('writes the condition Watching True in the watch window and False with the terminal status', async () => {
    const store = await storeFor();
    const created = server.create(machineOperation('watched', MACHINE));
    const ref = { name: 'watched', uid: created.metadata.uid ?? null };
    await store.markInProgress(ref, 'staging');
    await store.markInProgress(ref, 'watching for 600 s more', { watching: true });
    const conditions = () =>
      (server.get('watched')?.status as { conditions: { type: string; status: string; reason: string }[] }).conditions;
    expect(conditions()).toEqual([
      expect.objectContaining({ type: 'Completed', status: 'False', reason: 'InProgress' }),
      expect.objectContaining({ type: 'Watching', status: 'True', reason: 'WatchWindow' }),
    ]);
    await store.publish(ref, { phase: 'Failed', reason: 'DaemonFailed', message: 'crashed inside its watch window' });
    expect(conditions()).toEqual([
      expect.objectContaining({ type: 'Completed', status: 'False', reason: 'DaemonFailed' }),
      expect.objectContaining({ type: 'Watching', status: 'False', reason: 'WatchEnded' }),
    ]);
  });

  it('reports a deleted or re-created operation as gone, and a persistent conflict as an error', async () => {
    const store = await storeFor();
    const created = server.create(machineOperation('op', MACHINE));
    server.delete('op');
    expect(
      await store.publish(
        { name: 'op', uid: created.metadata.uid ?? null },
        { phase: 'Failed', reason: 'DaemonFailed', message: 'x' },
      ),
    ).toEqual({ kind: 'gone' });
    server.create(machineOperation('op', MACHINE));
    expect(await store.markInProgress({ name: 'op', uid: created.metadata.uid ?? null }, 'x')).toEqual({
      kind: 'gone',
    });
    server.conflictNext(100);
    await expect(store.markInProgress({ name: 'op', uid: null }, 'x')).rejects.toMatchObject({
      constructor: ClusterError,
      status: 409,
    });
  });

  it('refuses a kubeconfig that does not exist with a ClusterError', async () => {
    await expect(KubeClient.connect(join(scratch.root, 'missing.yaml'))).rejects.toBeInstanceOf(ClusterError);
    writeFileSync(join(scratch.root, 'empty.yaml'), 'apiVersion: v1\nkind: Config\n');
    await expect(KubeClient.connect(join(scratch.root, 'empty.yaml'))).rejects.toBeInstanceOf(ClusterError);
  });
});
