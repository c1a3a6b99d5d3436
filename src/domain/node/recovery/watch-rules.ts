import type { SlotName } from '../layout/slot.js';
import type { UpgradeRecord } from '../record/upgrade-record.js';
import { crashedInWindow, nextWindowStep, type RestartObservation, type WatchWindow } from '../record/watch-window.js';
import { POLICY_FAILURES } from './policy-failures.js';
import type { StartupDecision, StartupInput } from './recovery-vocabulary.js';

// The managed path's watch window (docs/protocol.md#watch-window), as rows of S4/S5: between the
// health gate and the rest of the completion, the candidate stays on trial for the window.

/** The window that belongs to this record's candidate, or null (none, another's, the direct path's). */
export function windowOfRecord(watch: WatchWindow | null, record: UpgradeRecord): WatchWindow | null {
  if (watch === null || watch.owner !== 'managed' || watch.candidate !== record.candidate) return null;
  return record.candidateDigest === null || watch.candidateDigest === record.candidateDigest ? watch : null;
}

/**
 * A crash inside the window, seen by the process that resumes it: the service manager restarted
 * the agent on its own since the window opened. Checked before the candidate is measured again.
 */
export function crashDecision(input: StartupInput, record: UpgradeRecord): StartupDecision | null {
  const window = windowOfRecord(input.watch, record);
  if (window === null || !crashedInWindow(window, input.observed.restarts)) return null;
  return { kind: 'record-failure', rule: 'S5', failure: POLICY_FAILURES.crashedInWindow, recoveryRequired: true };
}

/**
 * The window once the candidate proved healthy: open it, take a new restart count after a
 * reboot, tell the cluster, watch slice by slice; null once it is over (or none is configured),
 * and the completion goes on.
 */
export function watchDecision(input: StartupInput, record: UpgradeRecord, candidate: SlotName): StartupDecision | null {
  const step = nextWindowStep(windowOfRecord(input.watch, record), input.observed.restarts);
  switch (step.kind) {
    case 'open':
      return input.watchMs === 0
        ? null
        : { kind: 'start-watch', rule: 'S4', slot: candidate, digest: record.candidateDigest, windowMs: input.watchMs };
    // Checked before the candidate is measured again (crashDecision); found here only when the
    // count grew during this process's own measurement.
    case 'crashed':
      return { kind: 'record-failure', rule: 'S5', failure: POLICY_FAILURES.crashedInWindow, recoveryRequired: true };
    case 'rebase':
      return { kind: 'rebase-watch', rule: 'S4' };
    case 'watch':
      return input.progress.watchReported
        ? { kind: 'watch', rule: 'S4', slot: candidate, sliceMs: step.sliceMs }
        : { kind: 'report-watching', rule: 'S4' };
    case 'over':
      return null;
  }
}

/**
 * Before the record goes, its window goes, so a window never outlives the upgrade it delays. One
 * left without a record (a release that knows no windows finished the upgrade) goes at S1.
 */
export function windowCleanup(input: StartupInput, rule: 'S1' | 'S4' | 'S8'): StartupDecision | null {
  return input.watch?.owner === 'managed' ? { kind: 'delete-watch', rule } : null;
}

/** What the restart observation is when nothing is watched (no count needed). */
export const NO_RESTART_OBSERVATION: RestartObservation = { restartEpoch: null, restarts: null };
