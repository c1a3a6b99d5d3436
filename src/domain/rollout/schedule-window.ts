import { WEEKDAYS, type ScheduleWindow } from './rollout-spec.js';

/**
 * Whether a maintenance window is open at an instant. Local wall-clock time comes from the
 * runtime's time-zone database (Intl): a pure function of the instant and the zone, with no
 * clock read. A window is measured on the wall clock, so a 4-hour window that spans a DST change
 * lasts 3 or 5 real hours, as an operator reading a wall clock expects.
 */

const MINUTES_PER_DAY = 1440;

export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

interface WallClock {
  /** 0 = Sunday. */
  readonly weekday: number;
  readonly minuteOfDay: number;
}

function wallClock(nowMs: number, timeZone: string): WallClock {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(nowMs);
  const part = (type: string): string => parts.find((entry) => entry.type === type)?.value ?? '';
  const weekday = WEEKDAYS.indexOf(part('weekday') as (typeof WEEKDAYS)[number]);
  return { weekday: Math.max(0, weekday), minuteOfDay: Number(part('hour')) * 60 + Number(part('minute')) };
}

/** True when a window opened on some listed day at its start and has not lasted its duration yet. */
export function windowOpen(window: ScheduleWindow, nowMs: number): boolean {
  const { weekday, minuteOfDay } = wallClock(nowMs, window.timeZone);
  const durationMinutes = window.durationMs / 60_000;
  // The window may have opened today or on one of the days before (a long or overnight window).
  const daysBack = Math.ceil(durationMinutes / MINUTES_PER_DAY);
  for (let back = 0; back <= daysBack; back += 1) {
    const day = WEEKDAYS[(weekday - back + 7 * 8) % 7] ?? 'Sun';
    if (window.days.length > 0 && !window.days.includes(day)) continue;
    const sinceStart = minuteOfDay + back * MINUTES_PER_DAY - window.startMinute;
    if (sinceStart >= 0 && sinceStart < durationMinutes) return true;
  }
  return false;
}

/** No windows means no restriction. */
export function scheduleOpen(windows: readonly ScheduleWindow[], nowMs: number): boolean {
  return windows.length === 0 || windows.some((window) => windowOpen(window, nowMs));
}
