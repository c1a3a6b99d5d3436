import type { RecordedFailure, UpgradeRecord } from '../record/upgrade-record.js';
import { COMPLETE_OUTCOME, failedOutcome, POLICY_FAILURES } from './policy-failures.js';
import { checkRecordShape, nextRollbackStep, rollbackTarget, shouldQuarantine } from './rollback-rules.js';
import { checkStartupDecision } from './startup-invariants.js';
import type { StartupDecision, StartupInput, StartupRule } from './recovery-vocabulary.js';
import { crashDecision, watchDecision, windowCleanup, windowOfRecord } from './watch-rules.js';

/**
 * The next single decision of the startup gate (docs/protocol.md#startup-gate-s1s8; first matching
 * row wins).
 */
export function decideStartup(input: StartupInput): StartupDecision {
  if (input.record !== null) checkRecordShape(input.record);
  const decision = startupDecision(input);
  checkStartupDecision(input, decision);
  return decision;
}

function startupDecision(input: StartupInput): StartupDecision {
  const { record } = input;
  if (record === null) return windowCleanup(input, 'S1') ?? { kind: 'open-gate', rule: 'S1' };
  if (record.failure === null) return undecided(input, record);
  return failed(input, record, record.failure);
}

/** A record without a failure: S2–S5 (and the own-record guard). */
function undecided(input: StartupInput, record: UpgradeRecord): StartupDecision {
  const { observed, progress } = input;
  // The reference guard. Only in self-hosted mode: a sidecar daemon legitimately continues its
  // own upgrade after restarting the agent unit (row 8), in the same process.
  if (input.mode === 'self-hosted' && record.instanceId === input.instanceId && input.handedOver !== false)
    return { kind: 'ignore-own-record', rule: 'own-record' };

  // Complete was decided by an earlier process: publish it again (a no-op at the store) and
  // delete; never judge the candidate a second time, or Failed could follow Complete.
  if (record.completed)
    return progress.published
      ? (windowCleanup(input, 'S4') ?? { kind: 'delete-record', rule: 'S4' })
      : { kind: 'publish', rule: 'S4', status: COMPLETE_OUTCOME };

  const candidate = record.candidate;
  if (candidate === null) return recordFailure('S2', POLICY_FAILURES.interruptedBeforeSlot, false);
  if (observed.current !== candidate) {
    return recordFailure(
      'S3',
      record.switchCommitted ? POLICY_FAILURES.switchUndone : POLICY_FAILURES.interruptedBeforeSwitch,
      false,
    );
  }

  // current == candidate: S4 if proven healthy and in sync, otherwise S5.
  if (input.mode === 'self-hosted') {
    // The unit runs the current link, so a restarted daemon that is not the candidate means the
    // candidate is not what the service runs: a failure, not something to wait for (a restart
    // could loop forever). The old process itself is caught by the guard above.
    if (observed.self !== candidate) return recordFailure('S5', POLICY_FAILURES.candidateNotRunning, true);
  }
  const crash = crashDecision(input, record);
  if (crash !== null) return crash;
  if (
    input.mode === 'sidecar' &&
    observed.candidateHealth === 'unknown' &&
    observed.agent !== candidate &&
    progress.restartedInto !== candidate
  ) {
    // The sidecar stopped between the switch and restarting the agent (row 7 → 8): the agent
    // still runs the previous binary. Restart it into the candidate once, then measure.
    return { kind: 'restart-agent', rule: 'S4', into: candidate };
  }
  if (observed.candidateHealth === 'unknown') return { kind: 'measure-health', rule: 'S4', slot: candidate };
  if (observed.candidateHealth === 'unhealthy') {
    const inWindow = windowOfRecord(input.watch, record) !== null;
    return recordFailure('S5', inWindow ? POLICY_FAILURES.unhealthyInWindow : POLICY_FAILURES.unhealthy, true);
  }
  const watching = watchDecision(input, record, candidate);
  if (watching !== null) return watching;

  // Healthy: nspawn ← current, then prove the digests equal (only now: nspawn never holds an
  // unproven candidate).
  switch (observed.container) {
    case 'equal':
    case 'not-applicable':
      break;
    case 'unknown':
      return progress.containerCopiedFrom === candidate
        ? { kind: 'check-container', rule: 'S4', slot: candidate }
        : { kind: 'sync-container', rule: 'S4', from: candidate };
    case 'differs':
      return progress.containerCopiedFrom === candidate
        ? recordFailure('S5', POLICY_FAILURES.containerMismatch, true)
        : { kind: 'sync-container', rule: 'S4', from: candidate };
  }
  if (!observed.stateCommitted)
    return { kind: 'commit-state', rule: 'S4', slot: candidate, digest: record.candidateDigest };
  return { kind: 'record-completion', rule: 'S4' };
}

/** A record with a failure: S6–S8. */
function failed(input: StartupInput, record: UpgradeRecord, failure: RecordedFailure): StartupDecision {
  const { observed, progress } = input;
  // The candidate is current, so it may be what runs (or what systemd starts next): recovery is
  // required whatever row recorded the failure. Keeps the failure, raises the flag.
  if (record.candidate !== null && observed.current === record.candidate && !record.recoveryRequired) {
    return recordFailure('S6', failure, true);
  }

  const step = nextRollbackStep(record, observed, progress.containerCopiedFrom);
  if (step !== null)
    return step.kind === 'roll-back'
      ? { kind: 'roll-back', rule: 'S6', to: step.to }
      : { kind: 'restore-container', rule: 'S6', from: step.from };

  const target = rollbackTarget(record);
  if (record.recoveryRequired && target !== null) {
    if (input.mode === 'self-hosted') {
      if (observed.self !== target) {
        return progress.restartedInto === target
          ? { kind: 'wait', rule: 'S7', reason: 'restart-scheduled' }
          : { kind: 'restart-into-last-good', rule: 'S7', slot: target };
      }
    } else if (observed.agent !== target && progress.restartedInto !== target) {
      // Restart once per process; the app's restart effect waits for health (bounded) and the
      // outcome is Failed either way, so a still-failing last-good does not block S8.
      return { kind: 'restart-agent', rule: 'S7', into: target };
    }
  }

  // S8: last-good is what runs, or recovery is not required.
  if (shouldQuarantine(record) && !observed.quarantined && record.candidateDigest !== null) {
    return { kind: 'quarantine', rule: 'S8', digest: record.candidateDigest };
  }
  if (!progress.published) return { kind: 'publish', rule: 'S8', status: failedOutcome(failure) };
  return windowCleanup(input, 'S8') ?? { kind: 'delete-record', rule: 'S8' };
}

function recordFailure(rule: StartupRule, failure: RecordedFailure, recoveryRequired: boolean): StartupDecision {
  return { kind: 'record-failure', rule, failure, recoveryRequired };
}
