import { invariant } from '../../common/invariant.js';
import type { SlotName } from '../layout/slot.js';
import type { UpgradeRecord } from '../record/upgrade-record.js';
import type { ContainerVerdict } from './recovery-vocabulary.js';

// The rules the startup gate and the recovery command share: when a rollback is allowed, where
// it goes and what its next step is, and which records are impossible.

/**
 * The never-downgrade rule: a rollback (current → last-good target, then nspawn ← it) is allowed
 * only when the candidate may be what runs — the switch was committed, recovery is required, or
 * current resolves to the candidate. A record without a candidate never changed a link, so it
 * never allows a rollback (stricter than the bare formula: `recoveryRequired` on a record without
 * a candidate would otherwise re-point current at whatever last-good is).
 */
export function rollbackAllowed(record: UpgradeRecord, observedCurrent: SlotName | null): boolean {
  if (record.candidate === null) return false;
  return record.switchCommitted || record.recoveryRequired || observedCurrent === record.candidate;
}

/**
 * Whether the candidate of `now` started after `recover` did (R1): another record was opened
 * while it waited for the lock, or this one's switch was committed meanwhile. The failure that
 * started `recover` is then an older binary's, already handled, and the candidate was never seen
 * failing: the next operation's switch must not be judged by its predecessor's failure.
 */
export function candidateStartedSince(atStart: UpgradeRecord | null, now: UpgradeRecord): boolean {
  if (atStart === null || atStart.instanceId !== now.instanceId) return true;
  return !atStart.switchCommitted && now.switchCommitted;
}

/**
 * The slot a rollback returns to: the record's `previous`. The managed path points last-good at
 * `previous` before it installs (row 6), so this is the last-good target; with two slots an
 * observed last-good that differs from it can only be missing or the failed candidate itself,
 * and the `roll-back` effect re-points it.
 */
export function rollbackTarget(record: UpgradeRecord): SlotName | null {
  return record.candidate === null ? null : record.previous;
}

/** Whether S8 quarantines the candidate: it was installed and may have run as the agent. */
export function shouldQuarantine(record: UpgradeRecord): boolean {
  return (
    record.failure !== null &&
    record.candidateDigest !== null &&
    record.candidate !== null &&
    (record.switchCommitted || record.recoveryRequired)
  );
}

export type RollbackStep =
  | { readonly kind: 'roll-back'; readonly to: SlotName }
  | { readonly kind: 'restore-container'; readonly from: SlotName };

/**
 * The next step of the (idempotent, repeatable) rollback, or `null` when nothing is left to do
 * or rollback is not allowed. Host links first (last-good and current → target), then the nspawn
 * copy ← target. A retry after "host link restored, nspawn copy failed" still restores the copy:
 * completion is judged from the copy itself (verified equal, or copied by this process), never
 * from whether the candidate is still current.
 */
export function nextRollbackStep(
  record: UpgradeRecord,
  observed: {
    readonly current: SlotName | null;
    readonly lastGood: SlotName | null;
    readonly container: ContainerVerdict;
  },
  containerCopiedFrom: SlotName | null,
): RollbackStep | null {
  if (!rollbackAllowed(record, observed.current)) return null;
  const target = rollbackTarget(record);
  invariant(target !== null, 'a record with a candidate has a previous slot');
  if (observed.current !== target || observed.lastGood !== target) return { kind: 'roll-back', to: target };
  if (containerInSync(observed.container) || containerCopiedFrom === target) return null;
  return { kind: 'restore-container', from: target };
}

/** The nspawn copy needs nothing: proven equal, or there is no active machine. */
export function containerInSync(container: ContainerVerdict): boolean {
  return container === 'equal' || container === 'not-applicable';
}

/** Impossible records (parseRecord and the record constructors already refuse them). */
export function checkRecordShape(record: UpgradeRecord): void {
  invariant(!record.switchCommitted || record.candidate !== null, 'switchCommitted requires a candidate');
  invariant((record.candidate === null) === (record.previous === null), 'candidate and previous are set together');
  invariant(record.candidate === null || record.candidate !== record.previous, 'candidate and previous differ');
}
