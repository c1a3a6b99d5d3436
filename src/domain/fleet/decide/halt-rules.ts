import type { Availability } from './availability.js';
import { fnv1a64 } from '../order/fnv1a64.js';
import type { ForwardLedger, WaveLedger } from './forward-ledger.js';
import type { HaltReason, HaltStatus } from '../status/rollout-status.js';

/**
 * The evidence that stops a rollout, in the order it is checked: an operation refused as
 * InvalidParameters (the rollout's own fault, so one is enough) or as Untrusted (a release the
 * publisher did not sign: every machine would refuse it, so one is enough), a wave's failures beyond its
 * budget, the fleet's unavailable machines at the cap with nothing that can free a slot, and a
 * wave whose every slot is held by a timed-out operation. What an operator accepted by resuming
 * an earlier halt does not count again.
 */

export interface HaltFinding {
  readonly reason: HaltReason;
  readonly wave: string;
  readonly message: string;
}

export function isStarted(wave: WaveLedger): boolean {
  return wave.previous?.startedAt !== undefined || wave.children.length > 0;
}

/** Machines the wave still has to dispatch, and whether any are left to take. */
export function remainingOf(wave: WaveLedger, ledger: ForwardLedger): number {
  return ledger.undispatched.length === 0 ? 0 : Math.max(0, wave.target - wave.claimedThrough);
}

export function findHalt(
  ledger: ForwardLedger,
  availability: Availability,
  current: WaveLedger | null,
): HaltFinding | null {
  const started = ledger.waves.filter(isStarted);
  for (const wave of started) {
    const invalid = wave.invalidParameters - (wave.previous?.accepted?.invalidParameters ?? 0);
    if (invalid > 0) {
      return {
        reason: 'InvalidParameters',
        wave: wave.spec.name,
        message: `wave ${wave.spec.name}: ${invalid} operation(s) refused their parameters as invalid`,
      };
    }
    const untrusted = wave.untrusted - (wave.previous?.accepted?.untrusted ?? 0);
    if (untrusted > 0) {
      return {
        reason: 'Untrusted',
        wave: wave.spec.name,
        message: `wave ${wave.spec.name}: ${untrusted} machine(s) refused the release as not signed by the publisher`,
      };
    }
  }
  for (const wave of started) {
    const used = wave.usedFailures - (wave.previous?.accepted?.failures ?? 0);
    if (used > wave.allowedFailures) {
      return {
        reason: 'FailureBudgetExceeded',
        wave: wave.spec.name,
        message: `wave ${wave.spec.name}: ${used} failure(s), the budget allows ${wave.allowedFailures}`,
      };
    }
  }
  const waveName = current?.spec.name ?? '';
  if (availability.cap !== null && availability.stuck >= availability.cap) {
    return {
      reason: 'MaxUnavailableReached',
      wave: waveName,
      message: `${availability.stuck} machine(s) timed out or failed unusable, maxUnavailable is ${availability.cap}`,
    };
  }
  const timedOut = (current?.timedOutLive ?? 0) - (current?.previous?.accepted?.timedOut ?? 0);
  if (current !== null && remainingOf(current, ledger) > 0 && timedOut >= current.maxInFlight) {
    return {
      reason: 'OperationsStalled',
      wave: waveName,
      message: `wave ${waveName}: all ${current.maxInFlight} slot(s) are held by timed-out operations`,
    };
  }
  return null;
}

/**
 * A halt's id is derived from the evidence, so replanning the same cluster gives the same id, and
 * from the halt before it, so a later halt never repeats an id an operator already resumed.
 */
export function haltRecord(
  finding: HaltFinding,
  rolloutUid: string,
  evidence: string,
  previousId: string,
  at: string,
  quarantine: boolean,
): HaltStatus {
  const digest = fnv1a64(`${rolloutUid}/${finding.reason}/${finding.wave}/${evidence}/${previousId}`).slice(0, 8);
  return {
    id: `${finding.wave === '' ? 'halt' : finding.wave}-${digest}`,
    reason: finding.reason,
    wave: finding.wave,
    at,
    message: finding.message,
    ...(quarantine && { quarantine: 'Requested' as const }),
  };
}
