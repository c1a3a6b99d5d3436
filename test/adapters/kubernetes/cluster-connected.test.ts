import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { startAuthGate, type AuthGate } from '../../support/kube/auth-gate.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { machineOperation, writeKubeconfig } from '../../support/kube/machine-operations.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger, type LogLine } from '../../support/recording-logger.js';
import { waitFor } from '../../support/wait-for.js';

const MACHINE = 'node-1';
const FAST = {
  idleTimeoutMs: 1_500,
  retryDelayMs: 50,
  retryDelayMaxMs: 200,
  watchTimeoutMinSeconds: 30,
  watchTimeoutMaxSeconds: 30,
};
const WAIT_MS = 10_000;

/** The "connected" line is the info line that names the server; backoff warnings carry `attempt`. */
const isConnected = (line: LogLine): boolean => line.level === 'info' && line.fields['server'] !== undefined;
const isListRetry = (line: LogLine): boolean => line.level === 'warn' && line.fields['attempt'] !== undefined;

describe('the daemon says it is connected only after the cluster answered', () => {
  let server: FakeApiServer;
  let scratch: ReturnType<typeof makeScratch>;
  let stop: AbortController;
  let logger: RecordingLogger;
  let gate: AuthGate | undefined;
  beforeEach(async () => {
    scratch = makeScratch();
    stop = new AbortController();
    logger = new RecordingLogger();
    server = await startFakeApiServer({ selectableFields: true, bookmarkIntervalMs: 200 });
  });
  afterEach(async () => {
    stop.abort();
    await gate?.close();
    gate = undefined;
    await server.close();
    scratch.cleanup();
  });

  it('not while the first lists are refused; once, naming server and machine, when a list succeeds', async () => {
    // Every request is refused 401 until the gate accepts the kubeconfig's token.
    gate = await startAuthGate(server.origin);
    server.create(machineOperation('op', MACHINE));
    const client = await KubeClient.connect(writeKubeconfig(scratch.root, gate.origin));
    const store = new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: new SystemClock(),
      logger,
      stream: FAST,
    });
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    const first = stream.next();
    expect(await waitFor(() => logger.lines.filter(isListRetry).length >= 3, WAIT_MS)).toBe(true);
    expect(logger.lines.filter(isConnected)).toEqual([]);
    gate.accept('test-token');
    expect((await first).value?.operation.name).toBe('op');
    const connected = logger.lines.filter(isConnected);
    expect(connected.map((line) => ({ server: line.fields['server'], machine: line.fields['machine'] }))).toEqual([
      { server: gate.origin, machine: MACHINE },
    ]);
    expect(logger.lines.indexOf(connected[0] as LogLine)).toBeGreaterThan(logger.lines.findLastIndex(isListRetry));
  });

  it('a relist after 410 Gone does not say it again', async () => {
    const client = await KubeClient.connect(writeKubeconfig(scratch.root, server.origin));
    const store = new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: new SystemClock(),
      logger,
      stream: FAST,
    });
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    server.create(machineOperation('before', MACHINE));
    expect((await stream.next()).value?.operation.name).toBe('before');
    // The re-watch after the drop starts from a compacted resourceVersion: 410, then a relist.
    server.compact();
    server.dropWatches();
    server.create(machineOperation('after', MACHINE));
    expect((await stream.next()).value?.operation.name).toBe('after');
    expect(server.requestCount({ method: 'GET', watch: false, path: /machineoperations$/ })).toBeGreaterThanOrEqual(2);
    expect(logger.lines.filter(isConnected)).toHaveLength(1);
  });
});
