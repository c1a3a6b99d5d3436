/**
 * The pacing benchmark (docs/benchmarks.md#pacing): three measurements, each against a baseline
 * measured in the same run.
 *
 * - Dispatch: a wave over `size` machines with no client-side limit, as the controller works now
 *   (creates in slow-start batches up to CREATE_BATCH_MAX, carried from step to step, each step
 *   planned as soon as the caches show the last one's creates) against how it worked before (one
 *   create at a time, every step waiting out the settle window), and one create at a time now, to
 *   tell the levers apart.
 * - Rate: the same with `--kube-api-qps 20 --kube-api-burst 30` over `pacedSize` machines: writes
 *   and creates a second once the burst is spent.
 * - Retry-After: a create answered 429 with Retry-After 3 s in the middle of a paced wave, against
 *   a plain 429 in the same place: the pause before the next write, and the writes in the second
 *   after it.
 */
import { CREATE_BATCH_MAX } from '../../src/app/fleet/controller/reconcile-steps.js';
import { dispatchWave, type TimedWrite } from './pacing-world.js';

export interface PacingOptions {
  readonly size: number;
  readonly pacedSize: number;
  readonly seed: number;
  /** How long the fake holds each write (0: it answers at once, about 0.1 ms). */
  readonly writeLatencyMs: number;
  readonly log: (line: string) => void;
}

export interface DispatchNumbers {
  readonly batchMax: number;
  readonly planOnOwnWrites: boolean;
  readonly waveSeconds: number;
  readonly createPhaseSeconds: number;
  readonly createsPerSecond: number;
}

export interface RateNumbers {
  readonly writesPerSecond: number;
  readonly createsPerSecond: number;
  readonly writes: number;
  readonly waveSeconds: number;
}

export interface RetryAfterNumbers {
  readonly retryAfterSeconds: number | null;
  /** From the 429's answer to the next write sent. */
  readonly pauseSeconds: number;
  /** Writes sent in the second after the pause. */
  readonly writesInNextSecond: number;
  readonly waveSeconds: number;
}

export interface PacingResult {
  readonly size: number;
  readonly pacedSize: number;
  readonly writeLatencyMs: number;
  readonly dispatch: {
    readonly before: DispatchNumbers;
    readonly sequential: DispatchNumbers;
    readonly batched: DispatchNumbers;
  };
  readonly rate: RateNumbers;
  readonly retryAfter: { readonly plain: RetryAfterNumbers; readonly withRetryAfter: RetryAfterNumbers };
  readonly targets: { readonly dispatchRatio: boolean; readonly rate: boolean; readonly retryAfter: boolean };
}

const seconds = (ms: number): number => Math.round(ms) / 1_000;

async function dispatch(options: PacingOptions, batchMax: number, planOnOwnWrites: boolean): Promise<DispatchNumbers> {
  const { size, seed, writeLatencyMs } = options;
  const run = await dispatchWave(size, seed, {
    pacing: null,
    createBatchMax: batchMax,
    planOnOwnWrites,
    writeLatencyMs,
  });
  return {
    batchMax,
    planOnOwnWrites,
    waveSeconds: seconds(run.waveMs),
    createPhaseSeconds: seconds(run.createPhaseMs),
    createsPerSecond: Math.round((size * 1_000) / run.createPhaseMs),
  };
}

/** Sent per second from the write after the burst to the last one. */
function perSecond(sentMs: readonly number[], burst: number): number {
  const sorted = [...sentMs].sort((a, b) => a - b);
  const from = sorted[burst] ?? 0;
  const to = sorted[sorted.length - 1] ?? 0;
  return to > from ? Math.round(((sorted.length - 1 - burst) * 1_000_0) / (to - from)) / 10 : 0;
}

const PACING = { qps: 20, burst: 30 } as const;

async function rate(options: PacingOptions): Promise<RateNumbers> {
  const run = await dispatchWave(options.pacedSize, options.seed, {
    pacing: PACING,
    createBatchMax: CREATE_BATCH_MAX,
    planOnOwnWrites: true,
    writeLatencyMs: options.writeLatencyMs,
  });
  const writes = run.writes.map((write) => write.sentMs);
  const creates = run.writes.filter((write) => write.create).map((write) => write.sentMs);
  return {
    writesPerSecond: perSecond(writes, PACING.burst),
    createsPerSecond: perSecond(creates, PACING.burst),
    writes: writes.length,
    waveSeconds: seconds(run.waveMs),
  };
}

/** A paced wave whose 150th create is answered 429 (with Retry-After when given). */
async function throttledWave(options: PacingOptions, retryAfterSeconds: number | null): Promise<RetryAfterNumbers> {
  let creates = 0;
  const run = await dispatchWave(options.pacedSize, options.seed, {
    pacing: PACING,
    createBatchMax: CREATE_BATCH_MAX,
    planOnOwnWrites: true,
    writeLatencyMs: options.writeLatencyMs,
    onWrite: (write, ask) => {
      if (write.create && (creates += 1) === 149) ask({ type: 'fail-next-create', status: 429, retryAfterSeconds });
    },
  });
  const throttled = run.writes.find((write) => write.status === 429) as TimedWrite | undefined;
  if (throttled?.answeredMs === undefined || throttled.answeredMs === null) throw new Error('no 429 was answered');
  const answeredMs = throttled.answeredMs;
  const after = run.writes.filter((write) => write.sentMs > answeredMs).map((write) => write.sentMs);
  const nextMs = Math.min(...after);
  return {
    retryAfterSeconds,
    pauseSeconds: seconds(nextMs - answeredMs),
    writesInNextSecond: after.filter((sentMs) => sentMs < nextMs + 1_000).length,
    waveSeconds: seconds(run.waveMs),
  };
}

export async function runPacingBench(options: PacingOptions): Promise<PacingResult> {
  const { size, log } = options;
  log(`dispatch: ${size} machines, no client-side limit, as before: one create at a time, every step settling`);
  const before = await dispatch(options, 1, false);
  log(`dispatch: ${size} machines, no client-side limit, one create at a time, each step after the last`);
  const sequential = await dispatch(options, 1, true);
  log(`dispatch: ${size} machines, no client-side limit, batches up to ${CREATE_BATCH_MAX}, each step after the last`);
  const batched = await dispatch(options, CREATE_BATCH_MAX, true);
  log(`rate: ${options.pacedSize} machines at QPS ${PACING.qps}, burst ${PACING.burst}`);
  const paced = await rate(options);
  log('Retry-After: a plain 429, then a 429 with Retry-After 3 s, at the 150th create of a paced wave');
  const plain = await throttledWave(options, null);
  const withRetryAfter = await throttledWave(options, 3);
  const within = (value: number): boolean => Math.abs(value - PACING.qps) <= PACING.qps * 0.1;
  return {
    size,
    pacedSize: options.pacedSize,
    writeLatencyMs: options.writeLatencyMs,
    dispatch: { before, sequential, batched },
    rate: paced,
    retryAfter: { plain, withRetryAfter },
    targets: {
      dispatchRatio: before.waveSeconds >= 5 * batched.waveSeconds,
      rate: within(paced.writesPerSecond) && within(paced.createsPerSecond),
      retryAfter: withRetryAfter.pauseSeconds >= 3 && withRetryAfter.writesInNextSecond <= PACING.qps + 1,
    },
  };
}
