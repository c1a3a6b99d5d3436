import { MAX_WINDOWS, WEEKDAYS, type ScheduleWindow, type Weekday } from './rollout-spec.js';
import { checkKnownFields, isRecord, objectField, ProblemList, type Json } from './spec-problems.js';
import { parseDuration } from './time-text.js';
import { isTimeZone } from './schedule-window.js';
import { isOneOf } from '../../common/one-of.js';

const WEEK_MS = 7 * 86_400_000;

/** `spec.schedule.windows`: when new operations may start. Absent or empty: always. */
export function parseSchedule(spec: Json, problems: ProblemList): { readonly windows: readonly ScheduleWindow[] } {
  const schedule = objectField(spec, 'schedule', 'spec', problems);
  if (schedule === null) return { windows: [] };
  checkKnownFields(schedule, ['windows'], 'spec.schedule', problems);
  const raw = schedule['windows'] ?? [];
  if (!Array.isArray(raw) || raw.length > MAX_WINDOWS) {
    problems.add('E_ROLLOUT_WINDOW', 'spec.schedule.windows', `must be a list of at most ${MAX_WINDOWS} windows`);
    return { windows: [] };
  }
  return {
    windows: raw.flatMap((entry: unknown, index) => parseWindow(entry, `spec.schedule.windows[${index}]`, problems)),
  };
}

function parseWindow(raw: unknown, path: string, problems: ProblemList): ScheduleWindow[] {
  if (!isRecord(raw)) {
    problems.add('E_ROLLOUT_WINDOW', path, 'must be an object');
    return [];
  }
  checkKnownFields(raw, ['days', 'start', 'duration', 'timeZone'], path, problems);
  const before = problems.size;
  const days = raw['days'] ?? [];
  if (!Array.isArray(days) || !days.every((day) => isOneOf(WEEKDAYS, day))) {
    problems.add('E_ROLLOUT_WINDOW', `${path}.days`, `must list days among ${WEEKDAYS.join(', ')}`);
  }
  const start = typeof raw['start'] === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw['start']) : null;
  if (start === null) problems.add('E_ROLLOUT_WINDOW', `${path}.start`, 'must be a local time HH:MM');
  const duration = typeof raw['duration'] === 'string' ? parseDuration(raw['duration']) : null;
  if (duration === null || duration <= 0 || duration > WEEK_MS) {
    problems.add(
      'E_ROLLOUT_WINDOW',
      `${path}.duration`,
      'must be a duration such as "4h", more than 0 and at most 168h',
    );
  }
  const timeZone = raw['timeZone'] ?? 'UTC';
  if (typeof timeZone !== 'string' || !isTimeZone(timeZone)) {
    problems.add('E_ROLLOUT_WINDOW', `${path}.timeZone`, 'must be an IANA time zone such as "Europe/Berlin"');
  }
  if (problems.size > before || start === null || duration === null) return [];
  return [
    {
      days: [...new Set(days as Weekday[])],
      startMinute: Number(start[1]) * 60 + Number(start[2]),
      durationMs: duration,
      timeZone: timeZone as string,
    },
  ];
}
