import { WEEKDAYS, type ScheduleWindow } from './rollout-spec.js';
import { daysFromCivil } from './time-text.js';

/**
 * Whether a maintenance window is open at an instant, to the millisecond, and when that may next
 * change. Local wall-clock time comes from the runtime's time-zone database (Intl): a pure
 * function of the instant and the zone, with no clock read. A window is measured on the wall
 * clock, so a 4-hour window that spans a DST change lasts 3 or 5 real hours, as an operator
 * reading a wall clock expects.
 */

const DAY_MS = 86_400_000;
/** A week and a day: every window opens within a week, and lasts at most a week. */
const DAYS_AHEAD = 8;
/** Halving a week down to a second takes 20 steps; the bound leaves room. */
const BISECTIONS_MAX = 40;

export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** One formatter per zone: building one costs more than the search below spends reading the clock. */
const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's wall clock at an instant, as milliseconds since 1970-01-01T00:00 on that wall clock. */
function wallMs(nowMs: number, timeZone: string): number {
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(nowMs);
  const part = (type: string): number => Number(parts.find((entry) => entry.type === type)?.value ?? 0);
  const seconds = (part('hour') * 60 + part('minute')) * 60 + part('second');
  return daysFromCivil(part('year'), part('month'), part('day')) * DAY_MS + seconds * 1000 + mod(nowMs, 1000);
}

const mod = (value: number, by: number): number => ((value % by) + by) % by;
/** 1970-01-01 was a Thursday; 0 is Sunday, as in WEEKDAYS. */
const weekdayOf = (wall: number): (typeof WEEKDAYS)[number] => WEEKDAYS[mod(Math.floor(wall / DAY_MS) + 4, 7)] ?? 'Sun';

/** The openings of a window, on the wall clock, from `daysBack` days before the day of `wall` to `DAYS_AHEAD` after. */
function openings(window: ScheduleWindow, wall: number): number[] {
  const today = Math.floor(wall / DAY_MS) * DAY_MS;
  const daysBack = Math.ceil(window.durationMs / DAY_MS);
  const out: number[] = [];
  for (let day = -daysBack; day <= DAYS_AHEAD; day += 1) {
    const start = today + day * DAY_MS + window.startMinute * 60_000;
    if (window.days.length === 0 || window.days.includes(weekdayOf(start))) out.push(start);
  }
  return out;
}

/** True when a window opened on some listed day at its start and has not lasted its duration yet. */
export function windowOpen(window: ScheduleWindow, nowMs: number): boolean {
  const wall = wallMs(nowMs, window.timeZone);
  return openings(window, wall).some((start) => wall >= start && wall - start < window.durationMs);
}

/** No windows means no restriction. */
export function scheduleOpen(windows: readonly ScheduleWindow[], nowMs: number): boolean {
  return windows.length === 0 || windows.some((window) => windowOpen(window, nowMs));
}

/**
 * The first instant after `nowMs` at which a window may open or close (`null` without windows):
 * its next edge on the wall clock, reached as many milliseconds later as the wall clock moves,
 * unless the zone changes its offset first (DST). Then it is the instant of that change, from
 * where the edge is measured again, so a wait never ends late.
 */
export function nextScheduleChange(windows: readonly ScheduleWindow[], nowMs: number): number | null {
  let next: number | null = null;
  for (const window of windows) {
    const wall = wallMs(nowMs, window.timeZone);
    const edges = openings(window, wall)
      .flatMap((start) => [start, start + window.durationMs])
      .filter((edge) => edge > wall);
    if (edges.length === 0) continue;
    const candidate = nowMs + (Math.min(...edges) - wall);
    const at = offsetChange(window.timeZone, nowMs, candidate) ?? candidate;
    next = next === null ? at : Math.min(next, at);
  }
  return next;
}

/** The instant in (fromMs, toMs] at which the zone's offset first differs from the one at fromMs, if any. */
function offsetChange(timeZone: string, fromMs: number, toMs: number): number | null {
  const offset = (ms: number): number => wallMs(ms, timeZone) - ms;
  const before = offset(fromMs);
  if (offset(toMs) === before) return null;
  let low = fromMs;
  let high = toMs;
  for (let step = 0; step < BISECTIONS_MAX && high - low > 1; step += 1) {
    const middle = Math.floor((low + high) / 2);
    if (offset(middle) === before) low = middle;
    else high = middle;
  }
  return high;
}
