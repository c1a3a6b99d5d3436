import { invariant } from '../../common/invariant.js';
import type { ProbeOutcome, ProbeSettings } from './probe-target.js';

/**
 * The probe half of the health gate (docs/protocol.md#health-probes): once the agent's process
 * is stable, the probe must succeed `successThreshold` times in a row; `failureThreshold`
 * failures in a row, or the gate's deadline, make the agent unhealthy. The app runs one attempt
 * at a time and asks `nextProbeStep` what comes next; time enters only as monotonic readings the
 * app passes in, so every verdict here is a table.
 */
export interface ProbeProgress {
  /** The gate's deadline (monotonic ms): no attempt runs past it. */
  readonly deadlineMs: number;
  /**
   * The most attempts that fit before the deadline at one per period. The deadline ends the run
   * first on any sane clock; this bounds it on every clock (I10).
   */
  readonly attemptsMax: number;
  readonly attempts: number;
  readonly successesInRow: number;
  readonly failuresInRow: number;
  /** When the last attempt started (monotonic ms), or null before the first. */
  readonly lastStartMs: number | null;
  /** The last failed attempt's reason, kept for the verdict. */
  readonly lastFailure: string | null;
}

export type ProbeStep =
  /** Wait `waitMs`, then run one attempt bounded by `timeoutMs`. */
  | { readonly kind: 'attempt'; readonly waitMs: number; readonly timeoutMs: number }
  | { readonly kind: 'passed' }
  | { readonly kind: 'failed'; readonly why: ProbeFailureWhy; readonly reason: string };

export type ProbeFailureWhy = 'failure-threshold' | 'deadline';

/** The probing starts now (`nowMs`) and must end by `deadlineMs`. */
export function startProbing(settings: ProbeSettings, nowMs: number, deadlineMs: number): ProbeProgress {
  invariant(settings.periodMs > 0, 'the probe period is positive');
  invariant(settings.successThreshold >= 1 && settings.failureThreshold >= 1, 'probe thresholds are at least 1');
  const budgetMs = Math.max(0, deadlineMs - nowMs);
  return {
    deadlineMs,
    attemptsMax: Math.floor(budgetMs / settings.periodMs) + 1,
    attempts: 0,
    successesInRow: 0,
    failuresInRow: 0,
    lastStartMs: null,
    lastFailure: null,
  };
}

/** The progress after one attempt that started at `startedMs`: a success breaks a failure run and back. */
export function recordProbeAttempt(progress: ProbeProgress, startedMs: number, outcome: ProbeOutcome): ProbeProgress {
  const base = { ...progress, attempts: progress.attempts + 1, lastStartMs: startedMs };
  return outcome.kind === 'succeeded'
    ? { ...base, successesInRow: progress.successesInRow + 1, failuresInRow: 0 }
    : { ...base, successesInRow: 0, failuresInRow: progress.failuresInRow + 1, lastFailure: outcome.reason };
}

/**
 * What the gate does next at monotonic time `nowMs`: a verdict once a threshold is reached, a
 * failure once no attempt can start and finish before the deadline, otherwise the next attempt
 * one period after the previous one started (at once for the first).
 */
export function nextProbeStep(settings: ProbeSettings, progress: ProbeProgress, nowMs: number): ProbeStep {
  if (progress.successesInRow >= settings.successThreshold) return { kind: 'passed' };
  if (progress.failuresInRow >= settings.failureThreshold) {
    return {
      kind: 'failed',
      why: 'failure-threshold',
      reason: `the health probe failed ${progress.failuresInRow} time${plural(progress.failuresInRow)} in a row (${progress.lastFailure ?? 'no reason'})`,
    };
  }
  const startMs = progress.lastStartMs === null ? nowMs : Math.max(nowMs, progress.lastStartMs + settings.periodMs);
  const remainingMs = progress.deadlineMs - startMs;
  if (remainingMs <= 0 || progress.attempts >= progress.attemptsMax) {
    const last = progress.lastFailure === null ? 'no attempt failed' : `last: ${progress.lastFailure}`;
    return {
      kind: 'failed',
      why: 'deadline',
      reason: `the health probe did not succeed ${settings.successThreshold} time${plural(settings.successThreshold)} in a row before the health timeout (${last})`,
    };
  }
  return { kind: 'attempt', waitMs: startMs - nowMs, timeoutMs: Math.min(settings.timeoutMs, remainingMs) };
}

function plural(count: number): string {
  return count === 1 ? '' : 's';
}
