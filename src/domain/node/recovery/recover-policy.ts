import { invariant } from '../../common/invariant.js';
import { recoverFailure } from './policy-failures.js';
import {
  candidateStartedSince,
  checkRecordShape,
  nextRollbackStep,
  rollbackAllowed,
  rollbackTarget,
} from './rollback-rules.js';
import type { RecoverDecision, RecoverInput } from './recovery-vocabulary.js';

/**
 * The next single decision of `recover` (docs/protocol.md#recovery-command-r1r3). Running it twice
 * equals running it once (I11): the failure is kept, the flag only rises, rollback is judged
 * from the links, and the restart is idempotent.
 *
 * `recoveryRequired` is raised only when the candidate may be running (`rollbackAllowed`):
 * an old daemon that crash-loops before the switch gets a failure recorded, no rollback, and a
 * restart — never a downgrade to an older last-good (the reference's weakness).
 */
export function decideRecoverCommand(input: RecoverInput): RecoverDecision {
  if (input.record !== null) checkRecordShape(input.record);
  const decision = recoverDecision(input);
  checkRecoverDecision(input, decision);
  return decision;
}

function recoverDecision(input: RecoverInput): RecoverDecision {
  const { record, observed, progress } = input;
  if (record === null) return { kind: 'done', rule: 'R1', exitCode: 0 };
  // Complete was already decided: the upgrade is over, and a failure now is an ordinary agent
  // failure that must not change the selected binary (the record is about to be deleted).
  if (record.completed) return { kind: 'done', rule: 'R1', exitCode: 0 };
  if (candidateStartedSince(input.recordAtStart, record)) return { kind: 'done', rule: 'R1', exitCode: 0 };
  const mayRun = rollbackAllowed(record, observed.current);
  if (record.failure === null || (mayRun && !record.recoveryRequired)) {
    return {
      kind: 'record-failure',
      rule: 'R3',
      failure: record.failure ?? recoverFailure(input.message),
      recoveryRequired: mayRun,
    };
  }
  const step = nextRollbackStep(record, observed, progress.containerCopiedFrom);
  if (step !== null)
    return step.kind === 'roll-back'
      ? { kind: 'roll-back', rule: 'R3', to: step.to }
      : { kind: 'restore-container', rule: 'R3', from: step.from };
  if (!progress.agentRestarted) return { kind: 'restart-agent', rule: 'R3' };
  return { kind: 'done', rule: 'R3', exitCode: 0 };
}

/** The global rules for a recover decision. Throws `InvariantViolation` when one does not hold. */
export function checkRecoverDecision(input: RecoverInput, decision: RecoverDecision): void {
  const { record, observed, progress } = input;
  const what = `recover: ${decision.kind}`;
  if (record === null || record.completed || candidateStartedSince(input.recordAtStart, record)) {
    invariant(decision.kind === 'done', `${what}: without an open record of its failure recover changes nothing`);
    return;
  }
  switch (decision.kind) {
    case 'record-failure':
      invariant(record.failure === null || decision.failure === record.failure, `${what}: an existing failure is kept`);
      invariant(
        decision.recoveryRequired === rollbackAllowed(record, observed.current),
        `${what}: recovery is required exactly when the candidate may run`,
      );
      return;
    case 'roll-back':
    case 'restore-container':
      invariant(record.failure !== null && rollbackAllowed(record, observed.current), `${what}: never downgrade`);
      if (decision.kind === 'roll-back')
        invariant(decision.to === rollbackTarget(record), `${what}: rolls back to the last-good target`);
      else
        invariant(
          decision.from === rollbackTarget(record) && observed.current === decision.from,
          `${what}: host link first`,
        );
      return;
    case 'restart-agent':
      invariant(!progress.agentRestarted && record.failure !== null, `${what}: once, after the failure is recorded`);
      return;
    case 'done':
      invariant(progress.agentRestarted, `${what}: the agent unit is restarted before recover exits`);
      return;
  }
}
