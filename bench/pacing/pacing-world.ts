/**
 * What the pacing benchmark runs: the fake API server of test/support/kube on 127.0.0.1 with N
 * Nodes and a release, in a process of its own (fake-host.ts), and in this process the
 * controller's reconcile loop (ControllerLoop: informers, the 250 ms settle window, the
 * Reconciler, backoff) over the real Kubernetes adapter and its token bucket, on the system clock. No daemons: the benchmark measures how fast the
 * controller dispatches a wave, so the operations stay Pending. Every write the adapter sends is
 * timed where it enters the HTTP client, after its token: what the API server sees.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTROLLER_SOCKETS } from '../../src/adapters/fleet/kubernetes/connect-controller.js';
import { KubernetesControllerCluster } from '../../src/adapters/fleet/kubernetes/kubernetes-controller-cluster.js';
import { OPERATIONS_PATH } from '../../src/adapters/fleet/kubernetes/resource-paths.js';
import { TokenBucket } from '../../src/adapters/fleet/kubernetes/token-bucket.js';
import { connectKubeHttp } from '../../src/adapters/common/kubernetes/kube-connection.js';
import { KubeHttp } from '../../src/adapters/common/kubernetes/kube-http.js';
import { loadWatchClient } from '../../src/adapters/common/kubernetes/kube-watch.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { ControllerLoop } from '../../src/app/fleet/controller/controller-loop.js';
import { RECONCILE_SETTLE_MS } from '../../src/app/fleet/controller/controller-options.js';
import { ClusterError } from '../../src/domain/common/port-errors.js';
import type { ControllerCluster, WritePacing } from '../../src/ports/fleet/controller-cluster.js';
import { informerSettings, NO_METRICS, WarningLog } from '../../test/sim/fleet/fleet-parts.js';
import { NEW_RELEASE } from '../../test/sim/fleet/fleet-scenarios.js';
import { Prng } from '../../test/sim/harness/index.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../test/support/kube/kubeconfig-builder.js';
import type { HostRequest } from './fake-host.js';

export interface TimedWrite {
  readonly method: string;
  readonly create: boolean;
  readonly sentMs: number;
  answeredMs: number | null;
  status: number | null;
}

/** The controller's HTTP client, noting when each write was sent and answered (performance.now()). */
class TimedHttp extends KubeHttp {
  readonly writes: TimedWrite[] = [];
  onWrite: (write: TimedWrite) => void = () => undefined;
  onAnswer: (write: TimedWrite) => void = () => undefined;

  override async call(...args: Parameters<KubeHttp['call']>): Promise<unknown> {
    const [method, path] = args;
    if (method === 'GET') return super.call(...args);
    const write: TimedWrite = {
      method,
      create: method === 'POST' && path === OPERATIONS_PATH,
      sentMs: performance.now(),
      answeredMs: null,
      status: null,
    };
    this.writes.push(write);
    this.onWrite(write);
    try {
      const answer = await super.call(...args);
      write.status = 200;
      return answer;
    } catch (error) {
      write.status = error instanceof ClusterError ? error.status : null;
      throw error;
    } finally {
      write.answeredMs = performance.now();
      this.onAnswer(write);
    }
  }
}

export interface RunOptions {
  readonly pacing: WritePacing | null;
  /** The fake holds every write this long before answering it, as a real API server's etcd commit does. */
  readonly writeLatencyMs: number;
  readonly createBatchMax: number;
  /** Plan a wave's next step as soon as the caches show the last one (false: wait out the settle window, as before). */
  readonly planOnOwnWrites: boolean;
  /** Called with every write as it is sent (a fault can be armed for a later one). */
  readonly onWrite?: (write: TimedWrite, ask: (request: HostRequest) => void) => void;
}

export interface RunResult {
  /** The rollout created → its last operation's create answered. */
  readonly waveMs: number;
  /** Wall time with at least one create under way in the reconciler (token waits included). */
  readonly createPhaseMs: number;
  readonly writes: readonly TimedWrite[];
  readonly warnings: readonly string[];
}

/** One wave over every machine at once: the rollout dispatches its whole fleet in steps of at most 100. */
function waveSpec(): Record<string, unknown> {
  return {
    releaseRef: { name: NEW_RELEASE },
    targets: { selector: { matchLabels: { 'node-role.kubernetes.io/agent': '' } } },
    state: 'Run',
    strategy: {
      waves: [{ name: 'all', percent: 100, maxInFlight: '100%', failureBudget: '1%' }],
      maxUnavailable: '100%',
      operationTimeout: '30m',
      onFailure: 'Halt',
    },
  };
}

async function until(done: () => boolean, limitMs: number, what: string): Promise<void> {
  const endMs = performance.now() + limitMs;
  while (!done()) {
    if (performance.now() > endMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The reconciler's creates, with the time some were under way summed up. */
function timedCreates(inner: ControllerCluster): { cluster: ControllerCluster; phaseMs: () => number } {
  let inFlight = 0;
  let startedMs = 0;
  let totalMs = 0;
  const cluster: ControllerCluster = {
    inform: (onEvent, signal) => inner.inform(onEvent, signal),
    updateRolloutStatus: (...args) => inner.updateRolloutStatus(...args),
    updateReleaseStatus: (...args) => inner.updateReleaseStatus(...args),
    quarantineRelease: (...args) => inner.quarantineRelease(...args),
    recordEvent: (...args) => inner.recordEvent(...args),
    close: () => inner.close(),
    createOperation: async (operation) => {
      if (inFlight++ === 0) startedMs = performance.now();
      try {
        return await inner.createOperation(operation);
      } finally {
        if (--inFlight === 0) totalMs += performance.now() - startedMs;
      }
    },
  };
  return { cluster, phaseMs: () => totalMs };
}

/**
 * A fresh fake with `size` Nodes and the release; the loop, leading, over filled caches; then the
 * rollout, and the time until the last of its `size` creates was answered.
 */
/** The fake API server in a child process (fake-process.mjs), with N Nodes and the release. */
async function forkFake(
  size: number,
  seed: number,
  writeLatencyMs: number,
): Promise<{ child: ChildProcess; origin: string }> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'fake-process.mjs');
  const child = fork(script, [String(size), String(seed), String(writeLatencyMs)], { stdio: 'inherit' });
  const origin = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { origin: string }).origin));
    child.once('exit', (code) => reject(new Error(`the fake API server exited (${code})`)));
  });
  return { child, origin };
}

/**
 * A fresh fake with `size` Nodes and the release; the loop, over filled caches; then the rollout,
 * and the time until the last of its `size` creates was answered.
 */
export async function dispatchWave(size: number, seed: number, options: RunOptions): Promise<RunResult> {
  const { child, origin } = await forkFake(size, seed, options.writeLatencyMs);
  const dir = mkdtempSync(join(tmpdir(), 'bench-pacing-'));
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const logger = new WarningLog();
  try {
    const kubeconfig = writeKubeconfigFile(join(dir, 'controller.yaml'), kubeconfigDocument({ server: origin }, {}));
    const plain = await connectKubeHttp(kubeconfig, { env: {} });
    const http = new TimedHttp(plain.config, plain.credentials, null, CONTROLLER_SOCKETS);
    http.onWrite = (write) => options.onWrite?.(write, (request) => child.send(request));
    const clock = new SystemClock();
    const adapter = new KubernetesControllerCluster({
      http,
      WatchClient: await loadWatchClient(),
      clock,
      logger,
      metrics: NO_METRICS,
      informers: informerSettings(new Prng(seed)),
      namespace: 'default',
      instance: 'bench-pacing',
      pacer: new TokenBucket(clock, options.pacing),
    });
    const { cluster, phaseMs } = timedCreates(adapter);
    const loop = new ControllerLoop({
      cluster,
      clock,
      logger,
      metrics: NO_METRICS,
      settings: {
        resyncMs: 300_000,
        retryDelayMs: 1_000,
        retryDelayMaxMs: 300_000,
        settleMs: RECONCILE_SETTLE_MS,
        createBatchMax: options.createBatchMax,
        planOnOwnWrites: options.planOnOwnWrites,
      },
    });
    running = loop.run(stop.signal);
    await until(() => loop.idle, 120_000, 'the caches filled');
    const startedMs = performance.now();
    child.send({ type: 'rollout', spec: waveSpec() } satisfies HostRequest);
    let landed = 0;
    let lastMs = 0;
    http.onAnswer = (write) => {
      if (!write.create || write.status !== 200) return;
      landed += 1;
      lastMs = Math.max(lastMs, write.answeredMs ?? 0);
    };
    await until(() => landed >= size, 1_800_000, `${size} creates`);
    return { waveMs: lastMs - startedMs, createPhaseMs: phaseMs(), writes: http.writes, warnings: logger.lines };
  } finally {
    stop.abort();
    await running.catch(() => undefined);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'close' } satisfies HostRequest);
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
