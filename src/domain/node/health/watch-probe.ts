import type { ProbeProgress } from './probe-decision.js';
import type { ProbeSettings } from './probe-target.js';

/**
 * The probe inside the watch window (docs/protocol.md#watch-window): the candidate already passed
 * its gate, so there is nothing left to reach — it must keep passing. Attempts go on one per
 * period until the slice's end; `failureThreshold` failures in a row fail it, anything less is
 * the ordinary noise of a working agent. Progress and attempts are the gate's
 * (`recordProbeAttempt`); only the verdicts differ.
 */
export type WatchProbeStep =
  | { readonly kind: 'attempt'; readonly waitMs: number; readonly timeoutMs: number }
  /** The slice ended without `failureThreshold` failures in a row. */
  | { readonly kind: 'held' }
  | { readonly kind: 'failed'; readonly reason: string };

/** What the watch does next at monotonic time `nowMs`, the slice ending at `progress.deadlineMs`. */
export function nextWatchProbeStep(settings: ProbeSettings, progress: ProbeProgress, nowMs: number): WatchProbeStep {
  if (progress.failuresInRow >= settings.failureThreshold)
    return {
      kind: 'failed',
      reason: `the health probe failed ${progress.failuresInRow} times in a row inside the watch window (${progress.lastFailure ?? 'no reason'})`,
    };
  // Every slice probes at least once, however short it is next to the probe's period.
  if (progress.attempts === 0) return { kind: 'attempt', waitMs: 0, timeoutMs: settings.timeoutMs };
  const startMs = Math.max(nowMs, (progress.lastStartMs ?? nowMs) + settings.periodMs);
  // A slice too short for one more whole attempt ends here: the next slice starts with one.
  if (progress.deadlineMs - startMs < settings.timeoutMs || progress.attempts >= progress.attemptsMax)
    return { kind: 'held' };
  return { kind: 'attempt', waitMs: startMs - nowMs, timeoutMs: settings.timeoutMs };
}
