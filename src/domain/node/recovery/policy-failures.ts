import type { ErrorCode } from '../../common/error-codes.js';
import { redactUrlsInText } from '../../common/redacted-url.js';
import type { RecordedFailure } from '../record/upgrade-record.js';
import type { TerminalOutcome } from './recovery-vocabulary.js';

// The codes and messages the policy writes into the record (all from the closed ErrorCode set).

export const COMPLETE_OUTCOME: TerminalOutcome = {
  phase: 'Complete',
  reason: 'Succeeded',
  message: 'AgentUpgrade completed',
};

/** The failures the policy itself records; tests assert on `code` and `reason` only. */
export const POLICY_FAILURES = {
  /** S2: the previous daemon stopped before it chose a slot. */
  interruptedBeforeSlot: daemonFailure('E_SERVICE', 'AgentUpgrade was interrupted before selecting a candidate slot'),
  /** S3: the previous daemon stopped before the switch; binaries untouched. */
  interruptedBeforeSwitch: daemonFailure(
    'E_SERVICE',
    'AgentUpgrade was interrupted before switching to the candidate binary',
  ),
  /** S3 with `switchCommitted`: current no longer points at the candidate (undone by someone else). */
  switchUndone: daemonFailure(
    'E_SERVICE',
    'AgentUpgrade was interrupted after the switch and current no longer points at the candidate',
  ),
  /** S5: the health/stability wait failed. */
  unhealthy: daemonFailure('E_UNHEALTHY', 'the upgraded agent did not become healthy; restored the last-good binary'),
  /** S5: the watch or the health wait failed inside the watch window. */
  unhealthyInWindow: daemonFailure(
    'E_UNHEALTHY',
    'the upgraded agent became unhealthy inside its watch window; restored the last-good binary',
  ),
  /** S5: the service manager restarted the upgraded agent on its own inside the watch window. */
  crashedInWindow: daemonFailure(
    'E_UNHEALTHY',
    'the upgraded agent crashed inside its watch window; restored the last-good binary',
  ),
  /** S5, self-hosted: the restarted daemon does not run the candidate although current does. */
  candidateNotRunning: daemonFailure(
    'E_UNHEALTHY',
    'the restarted daemon does not run the candidate binary; restored the last-good binary',
  ),
  /** S5: the nspawn copy still differs from the candidate after synchronising it. */
  containerMismatch: daemonFailure(
    'E_DIGEST_MISMATCH',
    'upgraded host and nspawn agent binaries do not match; restored the last-good binary',
  ),
  /** `recover` without `--message`. */
  recovered: daemonFailure('E_SERVICE', 'the upgraded agent failed repeatedly; restored the last-good binary'),
} as const satisfies Record<string, RecordedFailure>;

function daemonFailure(code: ErrorCode, message: string): RecordedFailure {
  return { reason: 'DaemonFailed', code, message };
}

/** The Failed status for a recorded failure: its own reason (ExecutionFailed or DaemonFailed) and message. */
export function failedOutcome(failure: RecordedFailure): TerminalOutcome {
  return { phase: 'Failed', reason: failure.reason, message: failure.message };
}

/** The failure `recover --message M` records (DaemonFailed, E_SERVICE). */
export function recoverFailure(message: string): RecordedFailure {
  const text = redactUrlsInText(message).trim();
  return text === '' ? POLICY_FAILURES.recovered : daemonFailure('E_SERVICE', text);
}
