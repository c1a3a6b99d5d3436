/**
 * The rate of a transfer and the time it has left, from monotonic readings the caller passes in
 * (the domain reads no clock).
 *
 * The rate is a time-weighted exponential moving average, seeded with the average over the first
 * second. A plain average since the start stays depressed by the slow start of every download
 * (DNS, TLS, redirects, TCP's slow start) for its whole length, so its ETA keeps shrinking faster
 * than real time; a rate per redraw jumps with every burst of chunks. Weighting each sample by the
 * time it covers (α = 1 − e^(−Δt/τ)) makes the smoothing a matter of seconds, however often the
 * caller samples: what the rate was more than a few seconds ago hardly counts.
 */
export interface TransferRate {
  /** Bytes per second, or null until a rate can be measured. */
  readonly bytesPerSecond: number | null;
  /** When the transfer started (monotonic ms). */
  readonly startMs: number;
  /** The reading the estimate stands at: when, and how many bytes had arrived. */
  readonly atMs: number;
  readonly bytes: number;
}

/** No rate before this long: the first moments measure the connection's set-up, not its speed. */
export const RATE_MIN_ELAPSED_MS = 1000;
/** The moving average's time constant: a sample this old weighs 1/e of a fresh one. */
export const RATE_TIME_CONSTANT_MS = 3000;

export function startTransferRate(nowMs: number): TransferRate {
  return { bytesPerSecond: null, startMs: nowMs, atMs: nowMs, bytes: 0 };
}

/**
 * The estimate once `bytes` have arrived by `nowMs`. A reading that does not move time forward
 * (the same millisecond, or a clock that went back) or that goes backwards in bytes leaves the
 * estimate as it was: it would divide by zero or make the rate negative.
 */
export function nextTransferRate(rate: TransferRate, bytes: number, nowMs: number): TransferRate {
  if (!Number.isFinite(bytes) || !Number.isFinite(nowMs)) return rate;
  if (rate.bytesPerSecond === null) {
    const elapsedMs = nowMs - rate.startMs;
    if (elapsedMs < RATE_MIN_ELAPSED_MS || bytes <= 0) return rate;
    return { ...rate, bytesPerSecond: (bytes * 1000) / elapsedMs, atMs: nowMs, bytes };
  }
  const spanMs = nowMs - rate.atMs;
  if (spanMs <= 0 || bytes < rate.bytes) return rate;
  const sample = ((bytes - rate.bytes) * 1000) / spanMs;
  const weight = 1 - Math.exp(-spanMs / RATE_TIME_CONSTANT_MS);
  const next = rate.bytesPerSecond + weight * (sample - rate.bytesPerSecond);
  return {
    ...rate,
    bytesPerSecond: Number.isFinite(next) && next >= 0 ? next : rate.bytesPerSecond,
    atMs: nowMs,
    bytes,
  };
}

/**
 * How long `remainingBytes` take at the estimated rate, in ms: 0 once nothing remains, null while
 * there is no rate (not measured yet, or nothing arrives).
 */
export function remainingTimeMs(remainingBytes: number, bytesPerSecond: number | null): number | null {
  if (!Number.isFinite(remainingBytes)) return null;
  if (remainingBytes <= 0) return 0;
  if (bytesPerSecond === null || !Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return null;
  const ms = (remainingBytes * 1000) / bytesPerSecond;
  return Number.isFinite(ms) ? ms : null;
}
