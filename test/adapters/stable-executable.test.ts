import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { waitForStableExecutable, type MainProcessSample } from '../../src/adapters/node/service/stable-executable.js';
import type { HealthVerdict } from '../../src/ports/node/service-manager.js';

const SLOT = '/usr/local/lib/aks-flex-node/aks-flex-node-green';
const OTHER = '/usr/local/lib/aks-flex-node/aks-flex-node-blue';
const LIMITS = { timeoutMs: 2_000, stableMs: 1_000, pollMs: 250 } as const;

type Observation = MainProcessSample | null | 'gave-up';
const runs = (pid: number, executable: string | null = SLOT): MainProcessSample => ({ pid, executable });
const times = (count: number, observation: Observation): Observation[] =>
  Array.from({ length: count }, () => observation);

/**
 * The health rule every service adapter shares, as a table: what the service manager shows at
 * each poll (one observation per `pollMs` of virtual time; the last repeats) → the verdict, and
 * when it is reached. One main process must run the expected binary without interruption for
 * `stableMs`, within `timeoutMs`.
 */
const CASES: readonly (readonly [string, readonly Observation[], HealthVerdict['kind'], number])[] = [
  ['one PID runs the slot from the first poll: healthy once stableMs passed', [runs(10)], 'healthy', 1_000],
  ['it starts a poll late: the interval counts from the first sighting', [null, runs(10)], 'healthy', 1_250],
  ['nothing ever runs: not running at the deadline', [null], 'not-running', 2_000],
  ['another binary runs throughout: unhealthy at the deadline', [runs(10, OTHER)], 'unhealthy', 2_000],
  [
    'a new PID (a restart) restarts the interval, too late to finish: unhealthy',
    [...times(3, runs(10)), ...times(4, runs(11)), runs(12)],
    'unhealthy',
    2_000,
  ],
  ['a restart early enough leaves room for a full interval: healthy', [runs(10), runs(11)], 'healthy', 1_250],
  ['the manager gives up (start limit, failed unit): unhealthy at once', [runs(10), 'gave-up'], 'unhealthy', 250],
  ['it ran, then stopped: unhealthy at the deadline', [runs(10), null], 'unhealthy', 2_000],
  ['its executable cannot be read (it just exited): unhealthy at the deadline', [runs(10, null)], 'unhealthy', 2_000],
  [
    'the wrong binary for a moment breaks the interval',
    [runs(10), runs(10), runs(10, OTHER), runs(10)],
    'healthy',
    1_750,
  ],
];

describe('waitForStableExecutable: observations → verdict', () => {
  it.each(CASES)('%s', async (_label, observations, verdict, atMs) => {
    const clock = new MemoryClock();
    const startMs = clock.nowMs();
    let poll = 0;
    const sample = async (): Promise<Observation> => observations[Math.min(poll++, observations.length - 1)] ?? null;
    const result = await waitForStableExecutable(sample, SLOT, LIMITS, clock);
    expect({ verdict: result.kind, atMs: clock.nowMs() - startMs }).toEqual({ verdict, atMs });
  });

  it('an aborted signal ends the wait at the next poll, not healthy', async () => {
    const clock = new MemoryClock();
    const controller = new AbortController();
    let polls = 0;
    const sample = async (): Promise<Observation> => {
      polls += 1;
      if (polls === 2) controller.abort();
      return runs(10);
    };
    const result = await waitForStableExecutable(sample, SLOT, LIMITS, clock, { signal: controller.signal });
    expect({ verdict: result.kind, polls }).toEqual({ verdict: 'unhealthy', polls: 2 });
  });

  it('onPoll hears how long the slot ran without interruption, 0 while it does not, and never decides', async () => {
    const clock = new MemoryClock();
    const heard: number[] = [];
    let poll = 0;
    const observations: Observation[] = [runs(10), runs(10), null, runs(11)];
    const sample = async (): Promise<Observation> => observations[Math.min(poll++, observations.length - 1)] ?? null;
    const result = await waitForStableExecutable(sample, SLOT, LIMITS, clock, { onPoll: (ms) => heard.push(ms) });
    expect(result.kind).toBe('healthy');
    expect(heard).toEqual([0, 250, 0, 0, 250, 500, 750, 1_000]);
  });

  it('every wait is bounded: at most timeoutMs / pollMs + 1 polls whatever the manager shows', async () => {
    const clock = new MemoryClock();
    let polls = 0;
    await waitForStableExecutable(async () => (polls++ % 2 === 0 ? runs(polls) : null), SLOT, LIMITS, clock);
    expect(polls).toBeLessThanOrEqual(LIMITS.timeoutMs / LIMITS.pollMs + 1);
  });
});
