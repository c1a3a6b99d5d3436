import { describe, expect, it } from 'vitest';
import {
  nextProbeStep,
  recordProbeAttempt,
  startProbing,
  type ProbeProgress,
  type ProbeStep,
} from '../../src/domain/node/health/probe-decision.js';
import { probeFailed, type ProbeOutcome, type ProbeSettings } from '../../src/domain/node/health/probe-target.js';

const SETTINGS: ProbeSettings = {
  target: { kind: 'exec', command: ['/bin/true'] },
  periodMs: 1_000,
  timeoutMs: 500,
  successThreshold: 2,
  failureThreshold: 3,
};
const OK: ProbeOutcome = { kind: 'succeeded' };
const NO = probeFailed('http-status', 'HTTP 503');

/**
 * Runs the decision against a scripted probe (its answers repeat) on virtual time, as the app's
 * loop does: each attempt takes `attemptMs`, waits come from the decision. Returns the verdict and the attempts.
 */
function run(
  answers: readonly ProbeOutcome[],
  options: { settings?: ProbeSettings; budgetMs?: number; attemptMs?: number } = {},
): { verdict: ProbeStep; attempts: number; starts: number[] } {
  const settings = options.settings ?? SETTINGS;
  let nowMs = 10_000;
  let progress: ProbeProgress = startProbing(settings, nowMs, nowMs + (options.budgetMs ?? 30_000));
  const starts: number[] = [];
  for (let round = 0; round < 1_000; round += 1) {
    const step = nextProbeStep(settings, progress, nowMs);
    if (step.kind !== 'attempt') return { verdict: step, attempts: progress.attempts, starts };
    expect(step.timeoutMs).toBeLessThanOrEqual(settings.timeoutMs);
    nowMs += step.waitMs;
    starts.push(nowMs);
    const answer = answers[progress.attempts % answers.length] ?? NO;
    progress = recordProbeAttempt(progress, nowMs, answer);
    nowMs += Math.min(options.attemptMs ?? 10, step.timeoutMs);
  }
  throw new Error('the probe decision did not settle');
}

describe('the probe decision (health.probe)', () => {
  it.each([
    ['successThreshold successes in a row pass', [OK, OK], 'passed', 2],
    ['a failure resets the success run', [OK, NO, OK, OK], 'passed', 4],
    ['failureThreshold failures in a row fail', [NO, NO, NO], 'failed', 3],
    ['a success resets the failure run', [NO, NO, OK, NO, NO, OK, OK], 'passed', 7],
    ['flapping never passes or fails on a threshold, so the deadline decides', [OK, NO], 'failed', 30],
  ] as const)('%s', (_name, answers, verdict, attempts) => {
    const result = run(answers);
    expect({ verdict: result.verdict.kind, attempts: result.attempts }).toEqual({ verdict, attempts });
  });

  it('names the threshold or the deadline as why it failed, with the last reason kept as data', () => {
    const threshold = run([NO]).verdict;
    expect(threshold).toMatchObject({ kind: 'failed', why: 'failure-threshold' });
    const deadline = run([OK, NO]).verdict;
    expect(deadline).toMatchObject({ kind: 'failed', why: 'deadline' });
  });

  it('starts the first attempt at once and the next ones one period after the previous started', () => {
    const { starts } = run([NO, NO, NO], { attemptMs: 300 });
    expect(starts.map((at) => at - 10_000)).toEqual([0, 1_000, 2_000]);
  });

  it('starts the next attempt at once when an attempt took longer than the period', () => {
    const settings = { ...SETTINGS, periodMs: 200, timeoutMs: 500 };
    const { starts } = run([NO, NO, NO], { settings, attemptMs: 500 });
    expect(starts.map((at) => at - 10_000)).toEqual([0, 500, 1_000]);
  });

  it('never lets an attempt run past the deadline: the last one gets only the time left', () => {
    const settings = { ...SETTINGS, successThreshold: 1, failureThreshold: 100 };
    let progress = startProbing(settings, 0, 1_200);
    progress = recordProbeAttempt(progress, 0, NO);
    expect(nextProbeStep(settings, progress, 100)).toEqual({ kind: 'attempt', waitMs: 900, timeoutMs: 200 });
    progress = recordProbeAttempt(progress, 1_000, NO);
    expect(nextProbeStep(settings, progress, 1_150)).toMatchObject({ kind: 'failed', why: 'deadline' });
  });

  it('fails at once when no time is left, and after attemptsMax attempts on a clock that never moves', () => {
    expect(nextProbeStep(SETTINGS, startProbing(SETTINGS, 5_000, 5_000), 5_000)).toMatchObject({
      kind: 'failed',
      why: 'deadline',
    });
    const settings = { ...SETTINGS, successThreshold: 1, failureThreshold: 100 };
    let progress = startProbing(settings, 0, 3_000);
    expect(progress.attemptsMax).toBe(4);
    for (let attempt = 0; attempt < progress.attemptsMax; attempt += 1) {
      expect(nextProbeStep(settings, progress, 0).kind).toBe('attempt');
      progress = recordProbeAttempt(progress, 0, NO);
    }
    expect(nextProbeStep(settings, progress, 0)).toMatchObject({ kind: 'failed', why: 'deadline' });
  });

  it('passes with successThreshold 1 on the first success, even after failures', () => {
    const settings = { ...SETTINGS, successThreshold: 1 };
    expect(run([NO, NO, OK], { settings }).verdict.kind).toBe('passed');
  });
});
