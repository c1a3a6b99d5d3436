import { parseRolloutSpec } from '../../../domain/fleet/spec/parse-rollout-spec.js';
import { ANNOTATION_APPROVE_WAVE } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import { nextScheduleChange, scheduleOpen } from '../../../domain/fleet/spec/schedule-window.js';
import { formatDuration, formatTimestamp, parseTimestamp } from '../../../domain/fleet/spec/time-text.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { WaveStatus } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutView } from '../rollout/rollout-view.js';
import { record, shown } from './render-text.js';

/** Window edges looked through for the next opening: two a day for a week of overlapping windows. */
const SCHEDULE_EDGES_MAX = 64;

/**
 * What the rollout waits on now, and until when, as one line; `null` once it has ended. The
 * times are the status's own (a bake's end) or computed from the spec (a window's next opening)
 * and shown with how far they are from the read.
 */
export function waitingOn(view: RolloutView): string | null {
  const status = readPreviousStatus(view.status);
  const wave = status.waves.find((entry) => entry.name === record(view.status)['currentWave']);
  const name = shown(wave?.name);
  switch (view.phase) {
    case null:
      return 'the controller: it has not reported on this rollout yet';
    case 'Preview':
      return `a start: nothing is created in Preview (agent-upgrade rollout resume ${view.name} starts it)`;
    case 'WaitingForWindow':
      return windowLine(view);
    case 'Progressing':
      return `the operations of wave ${name}: ${shown(record(record(view.status)['counts'])['inFlight'])} in flight`;
    case 'Baking':
      return wave === undefined ? `a bake` : bakeLine(wave, view.readAtMs);
    case 'AwaitingApproval':
      return view.annotations[ANNOTATION_APPROVE_WAVE] === wave?.name
        ? `the controller: wave ${name} is approved, the next wave starts at its next reconcile`
        : `a person's approval of wave ${name} (agent-upgrade rollout approve ${view.name})`;
    case 'Paused':
      return `a resume: spec.state is Pause (agent-upgrade rollout resume ${view.name})`;
    case 'Halted':
      return 'a person: the rollout halted (its halt says what failed and what to do)';
    case 'RollingBack':
      return 'the fleet rollback: machines return to the rollback release';
    default:
      return null;
  }
}

function bakeLine(wave: WaveStatus, nowMs: number): string {
  const untilMs = parseTimestamp(wave.bakeUntil);
  const metrics = wave.analysis?.metrics ?? [];
  const pending = metrics.filter((metric) => metric.phase === 'Running').length;
  const analysis = pending === 0 ? '' : `, and ${pending} of ${metrics.length} analysis metric(s) still measuring`;
  if (untilMs === null || untilMs <= nowMs) return `the analysis of wave ${shown(wave.name)}${analysis}`;
  return `the bake of wave ${shown(wave.name)} until ${formatTimestamp(untilMs)} (${inTime(untilMs - nowMs)})${analysis}`;
}

function windowLine(view: RolloutView): string {
  const spec = parseRolloutSpec(view.spec);
  const windows = spec.ok ? spec.value.schedule.windows : [];
  let atMs: number | null = view.readAtMs;
  for (let edge = 0; edge < SCHEDULE_EDGES_MAX && atMs !== null; edge += 1) {
    if (scheduleOpen(windows, atMs)) break;
    atMs = nextScheduleChange(windows, atMs);
  }
  if (atMs === null || !scheduleOpen(windows, atMs)) return 'the schedule: no window opens within a week';
  if (atMs === view.readAtMs) return 'the schedule: a window is open now, the controller starts at its next reconcile';
  return `the schedule: the next window opens at ${formatTimestamp(atMs)} (${inTime(atMs - view.readAtMs)})`;
}

const inTime = (ms: number): string => `in ${formatDuration(Math.max(1000, Math.round(ms / 1000) * 1000))}`;
