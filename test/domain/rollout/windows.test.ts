/** Maintenance windows exact to the second: what starts at their edges, and when a wait for one ends. */
import { describe, expect, it } from 'vitest';
import type { ScheduleWindow } from '../../../src/domain/fleet/spec/rollout-spec.js';
import { nextScheduleChange, windowOpen } from '../../../src/domain/fleet/spec/schedule-window.js';
import { creates, exampleCluster, reconcile, strategy } from './example-cluster.js';

const at = (iso: string): number => Date.parse(iso);
const SECOND = 1000;

const window = (overrides: Partial<ScheduleWindow>): ScheduleWindow => ({
  days: [],
  startMinute: 12 * 60,
  durationMs: 90 * SECOND,
  timeZone: 'UTC',
  ...overrides,
});

describe('a window with seconds', () => {
  it('is open from its start to the millisecond before its end, and no longer', () => {
    const w = window({});
    expect(windowOpen(w, at('2025-01-06T11:59:59.999Z'))).toBe(false);
    expect(windowOpen(w, at('2025-01-06T12:00:00Z'))).toBe(true);
    expect(windowOpen(w, at('2025-01-06T12:01:29Z'))).toBe(true);
    expect(windowOpen(w, at('2025-01-06T12:01:29.999Z'))).toBe(true);
    expect(windowOpen(w, at('2025-01-06T12:01:30Z'))).toBe(false);
    expect(windowOpen(w, at('2025-01-06T12:01:31Z'))).toBe(false);
  });

  it('changes next at its exact start, then at its exact end', () => {
    const w = window({});
    expect(nextScheduleChange([w], at('2025-01-06T11:59:30.250Z'))).toBe(at('2025-01-06T12:00:00Z'));
    expect(nextScheduleChange([w], at('2025-01-06T12:00:00Z'))).toBe(at('2025-01-06T12:01:30Z'));
    expect(nextScheduleChange([w], at('2025-01-06T12:01:30Z'))).toBe(at('2025-01-07T12:00:00Z'));
    expect(nextScheduleChange([], at('2025-01-06T12:00:00Z'))).toBeNull();
  });

  it('is waited for across a change of daylight saving time without waking late', () => {
    // Berlin springs forward on Sunday 2025-03-30 at 02:00 CET (01:00 UTC) to 03:00 CEST.
    const sunday = window({ days: ['Sun'], startMinute: 9 * 60, durationMs: 30 * SECOND, timeZone: 'Europe/Berlin' });
    const wakes = wakesFrom([sunday], at('2025-03-29T12:00:00Z'), at('2025-03-30T07:00:30Z'));
    expect(wakes).toEqual([at('2025-03-30T01:00:00Z'), at('2025-03-30T07:00:00Z'), at('2025-03-30T07:00:30Z')]);
    // A start the wall clock skips (02:30) opens the window when the clock jumps past it.
    const skipped = window({ days: ['Sun'], startMinute: 150, durationMs: 3_600_000, timeZone: 'Europe/Berlin' });
    expect(nextScheduleChange([skipped], at('2025-03-29T12:00:00Z'))).toBe(at('2025-03-30T01:00:00Z'));
    expect(windowOpen(skipped, at('2025-03-30T00:59:59.999Z'))).toBe(false);
    expect(windowOpen(skipped, at('2025-03-30T01:00:00Z'))).toBe(true);
  });
});

/** The instants a controller waiting on `windows` from `fromMs` is woken at, up to `untilMs`. */
function wakesFrom(windows: readonly ScheduleWindow[], fromMs: number, untilMs: number): number[] {
  const wakes: number[] = [];
  for (let now = fromMs; wakes.length < 10;) {
    const next = nextScheduleChange(windows, now);
    if (next === null || next > untilMs) break;
    wakes.push(next);
    now = next;
  }
  return wakes;
}

describe('the planner at the edges of a window with seconds', () => {
  const schedule = { windows: [{ start: '12:00', duration: '1m30s' }] };
  const planAt = (iso: string) => {
    const world = exampleCluster(4, {
      ...strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 4 }] }),
      schedule,
    });
    world.nowMs = at(iso);
    return reconcile(world);
  };

  it('starts operations one second before the end, none at the end or one second after', () => {
    expect(creates(planAt('2025-01-06T12:01:29Z'))).toHaveLength(4);
    for (const iso of ['2025-01-06T12:01:30Z', '2025-01-06T12:01:31Z']) {
      const plan = planAt(iso);
      expect(plan.status.phase, iso).toBe('WaitingForWindow');
      expect(creates(plan), iso).toEqual([]);
      expect(plan.requeueAfterMs, iso).toBe(at('2025-01-07T12:00:00Z') - at(iso));
    }
  });

  it('plans again at the very second the window opens, and closes', () => {
    expect(planAt('2025-01-06T11:59:30Z').requeueAfterMs).toBe(30 * SECOND);
    expect(planAt('2025-01-06T12:00:00Z').requeueAfterMs).toBe(90 * SECOND);
  });
});
