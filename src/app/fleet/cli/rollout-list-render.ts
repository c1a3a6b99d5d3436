import { parseTimestamp } from '../../../domain/fleet/spec/time-text.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { RolloutView } from '../rollout/rollout-view.js';
import { columns, record, shown } from './render-text.js';
import { waitingOn } from './rollout-gate.js';

/**
 * `rollout list` as a table, as `kubectl get` prints one: NAME, RELEASE, STATE, PHASE, WAVE,
 * PROGRESS, IN-FLIGHT, FAILED, AGE; `-o wide` adds the halt and what each rollout waits on.
 */
export function renderRolloutList(views: readonly RolloutView[], wide: boolean): string[] {
  if (views.length === 0) return ['No AgentRollouts found.'];
  const header = ['NAME', 'RELEASE', 'STATE', 'PHASE', 'WAVE', 'PROGRESS', 'IN-FLIGHT', 'FAILED', 'AGE'];
  const rows = views.map((view) => {
    const raw = record(view.status);
    const counts = record(raw['counts']);
    const row = [
      view.name,
      shown(view.release),
      shown(view.state),
      shown(view.phase),
      shown(raw['currentWave']),
      shown(raw['progress']),
      shown(counts['inFlight']),
      shown(counts['failed']),
      age(view),
    ];
    if (!wide) return row;
    const halt = readPreviousStatus(view.status).halt;
    return [...row, halt === null ? '-' : `${halt.reason}/${shown(halt.wave)}`, waitingOn(view) ?? '-'];
  });
  return columns([wide ? [...header, 'HALT', 'WAITING ON'] : header, ...rows]);
}

/** kubectl's age: seconds under 2 minutes, minutes under 2 hours, hours under 2 days, then days. */
function age(view: RolloutView): string {
  const createdMs = parseTimestamp(view.createdAt);
  if (createdMs === null) return '-';
  const seconds = Math.max(0, Math.floor((view.readAtMs - createdMs) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
