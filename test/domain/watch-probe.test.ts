import { describe, expect, it } from 'vitest';
import { recordProbeAttempt, startProbing, type ProbeProgress } from '../../src/domain/node/health/probe-decision.js';
import type { ProbeSettings } from '../../src/domain/node/health/probe-target.js';
import { nextWatchProbeStep } from '../../src/domain/node/health/watch-probe.js';

const SETTINGS: ProbeSettings = {
  target: { kind: 'exec', command: ['/bin/true'] },
  periodMs: 1_000,
  timeoutMs: 500,
  successThreshold: 1,
  failureThreshold: 3,
};
const failed = { kind: 'failed', cause: 'http-status', reason: 'HTTP 503' } as const;
const succeeded = { kind: 'succeeded' } as const;

/** Runs a slice of `sliceMs` from 0 with attempts answering from `answers`, each taking no time. */
function runSlice(
  sliceMs: number,
  answers: readonly (typeof failed | typeof succeeded)[],
  carriedFailures = 0,
): { verdict: string; attempts: number } {
  let progress: ProbeProgress = { ...startProbing(SETTINGS, 0, sliceMs), failuresInRow: carriedFailures };
  let nowMs = 0;
  for (let round = 0; round <= progress.attemptsMax + 1; round += 1) {
    const step = nextWatchProbeStep(SETTINGS, progress, nowMs);
    if (step.kind !== 'attempt') return { verdict: step.kind, attempts: progress.attempts };
    nowMs += step.waitMs;
    progress = recordProbeAttempt(progress, nowMs, answers[progress.attempts] ?? succeeded);
  }
  throw new Error('the slice did not end');
}

describe('the probe inside the watch window', () => {
  it('holds through a slice of successes, one attempt per period, none past the end', () => {
    expect(runSlice(6_000, [])).toEqual({ verdict: 'held', attempts: 6 });
  });

  it('tolerates fewer failures in a row than the threshold, however many in all', () => {
    expect(runSlice(6_000, [failed, failed, succeeded, failed, failed, succeeded])).toEqual({
      verdict: 'held',
      attempts: 6,
    });
  });

  it('fails at the threshold, counting a run carried over from the slice before', () => {
    expect(runSlice(6_000, [failed, failed, failed])).toEqual({ verdict: 'failed', attempts: 3 });
    expect(runSlice(6_000, [failed], 2)).toEqual({ verdict: 'failed', attempts: 1 });
  });

  it('probes at least once in a slice shorter than one period', () => {
    expect(runSlice(300, [])).toEqual({ verdict: 'held', attempts: 1 });
  });
});
