import { invariant } from '../../common/invariant.js';
import type { SlotName } from '../layout/slot.js';
import type { UpgradeRecord } from '../record/upgrade-record.js';
import { containerInSync, rollbackAllowed, rollbackTarget } from './rollback-rules.js';
import type { StartupDecision, StartupInput } from './recovery-vocabulary.js';
import { windowOfRecord } from './watch-rules.js';

type DecisionOf<Kind extends StartupDecision['kind']> = Extract<StartupDecision, { readonly kind: Kind }>;

/** What every check needs: the input with its record, and what the decision is called in a message. */
interface Checked {
  readonly input: StartupInput;
  readonly record: UpgradeRecord;
  readonly candidate: SlotName | null;
  readonly what: string;
}

/**
 * The global rules for a startup decision. Throws `InvariantViolation` when one does not hold;
 * `decideStartup` checks every decision it returns, and tests call it on model runs.
 */
export function checkStartupDecision(input: StartupInput, decision: StartupDecision): void {
  const { record } = input;
  const what = `${decision.kind} (${decision.rule})`;
  if (record === null) {
    invariant(
      decision.kind === 'open-gate' || (decision.kind === 'delete-watch' && input.watch?.owner === 'managed'),
      `${what}: without a record the only decisions are open-gate and removing a managed window`,
    );
    return;
  }
  invariant(decision.kind !== 'open-gate', 'open-gate while a record exists');
  const checked: Checked = { input, record, candidate: record.candidate, what };
  switch (decision.kind) {
    case 'ignore-own-record':
    case 'record-failure':
    case 'measure-health':
      return checkBeforeVerdict(checked, decision);
    case 'sync-container':
    case 'check-container':
    case 'commit-state':
    case 'record-completion':
      return checkCompletion(checked, decision);
    case 'start-watch':
    case 'rebase-watch':
    case 'report-watching':
    case 'watch':
      return checkWatch(checked, decision);
    case 'publish':
    case 'delete-record':
    case 'delete-watch':
      return checkPublication(checked, decision);
    case 'roll-back':
    case 'restore-container':
    case 'restart-into-last-good':
    case 'restart-agent':
    case 'wait':
    case 'quarantine':
      return checkRecovery(checked, decision);
  }
}

/** Decisions taken while the candidate is not yet judged. */
function checkBeforeVerdict(
  { input, record, candidate, what }: Checked,
  decision: DecisionOf<'ignore-own-record' | 'record-failure' | 'measure-health'>,
): void {
  const { observed } = input;
  switch (decision.kind) {
    case 'ignore-own-record':
      invariant(
        input.mode === 'self-hosted' &&
          record.failure === null &&
          record.instanceId === input.instanceId &&
          input.handedOver !== false,
        `${what}: not an own, handed-over, undecided record`,
      );
      return;
    case 'record-failure':
      invariant(record.failure === null || decision.failure === record.failure, `${what}: an existing failure is kept`);
      invariant(
        !decision.recoveryRequired || (candidate !== null && observed.current === candidate),
        `${what}: recovery is required only when the candidate is current`,
      );
      return;
    case 'measure-health':
      invariant(
        record.failure === null && candidate !== null && observed.current === candidate && decision.slot === candidate,
        `${what}: health is measured for the current candidate`,
      );
      return;
  }
}

/** The candidate passed the health gate: undecided, current, healthy, and (self-hosted) this process. */
function provenHealthy({ input, record, candidate }: Checked): boolean {
  const { observed, mode } = input;
  return (
    record.failure === null &&
    candidate !== null &&
    observed.current === candidate &&
    observed.candidateHealth === 'healthy' &&
    (mode === 'sidecar' || observed.self === candidate)
  );
}

/** The window is only ever opened and watched for a candidate that passed the health gate. */
function checkWatch(
  checked: Checked,
  decision: DecisionOf<'start-watch' | 'rebase-watch' | 'report-watching' | 'watch'>,
): void {
  const { input, record, candidate, what } = checked;
  invariant(provenHealthy(checked), `${what}: only for a candidate that passed the health gate`);
  const window = windowOfRecord(input.watch, record);
  if (decision.kind === 'start-watch') {
    invariant(window === null && decision.slot === candidate && decision.windowMs > 0, `${what}: opens one window`);
    return;
  }
  invariant(window !== null, `${what}: needs the record's window`);
  if (decision.kind === 'watch')
    invariant(decision.slot === candidate && decision.sliceMs > 0, `${what}: watches the candidate for a while`);
}

/** The steps to Complete: each only once the candidate is proven healthy, in order. */
function checkCompletion(
  checked: Checked,
  decision: DecisionOf<'sync-container' | 'check-container' | 'commit-state' | 'record-completion'>,
): void {
  const { input, record, candidate, what } = checked;
  const { observed } = input;
  const window = windowOfRecord(input.watch, record);
  const proven = provenHealthy(checked) && (window === null || window.watchedMs >= window.windowMs);
  if (decision.kind === 'record-completion') {
    invariant(
      proven && containerInSync(observed.container) && observed.stateCommitted,
      `${what}: Complete needs current == candidate, healthy, nspawn equal, state committed`,
    );
    return;
  }
  const slot = decision.kind === 'sync-container' ? decision.from : decision.slot;
  invariant(proven && slot === candidate, `${what}: only after the candidate is proven healthy`);
  if (decision.kind === 'commit-state')
    invariant(containerInSync(observed.container), `${what}: only after the nspawn copy is proven equal`);
}

/** Publish once, the recorded outcome, after the rollback; delete only after publishing, the window first. */
function checkPublication(
  { input, record, what }: Checked,
  decision: DecisionOf<'publish' | 'delete-record' | 'delete-watch'>,
): void {
  const { observed, progress } = input;
  if (decision.kind !== 'publish') {
    invariant(progress.published, `${what}: publish before delete`);
    invariant(
      decision.kind === 'delete-watch' ? input.watch?.owner === 'managed' : input.watch?.owner !== 'managed',
      `${what}: the window goes before the record`,
    );
    return;
  }
  invariant(!progress.published, `${what}: published twice in one run`);
  if (decision.status.phase === 'Complete') {
    invariant(record.completed, `${what}: Complete is published only once recorded as the outcome`);
    return;
  }
  invariant(record.failure !== null, `${what}: Failed needs a recorded failure`);
  invariant(
    decision.status.reason === record.failure.reason && decision.status.message === record.failure.message,
    `${what}: the recorded reason and message are published`,
  );
  invariant(
    !rollbackAllowed(record, observed.current) || observed.current === rollbackTarget(record),
    `${what}: Failed is published only after the rollback`,
  );
}

/** The rollback and what follows it: never a downgrade, host link first, restarts and quarantine. */
function checkRecovery(
  { input, record, what }: Checked,
  decision: DecisionOf<
    'roll-back' | 'restore-container' | 'restart-into-last-good' | 'restart-agent' | 'wait' | 'quarantine'
  >,
): void {
  const { observed, progress, mode } = input;
  switch (decision.kind) {
    case 'roll-back':
      invariant(record.failure !== null && rollbackAllowed(record, observed.current), `${what}: never downgrade`);
      invariant(decision.to === rollbackTarget(record), `${what}: rolls back to the last-good target`);
      return;
    case 'restore-container':
      invariant(record.failure !== null && rollbackAllowed(record, observed.current), `${what}: never downgrade`);
      invariant(
        decision.from === rollbackTarget(record) && observed.current === decision.from,
        `${what}: host link first, then the nspawn copy`,
      );
      return;
    case 'restart-into-last-good':
      invariant(
        mode === 'self-hosted' &&
          record.failure !== null &&
          record.recoveryRequired &&
          observed.current === decision.slot,
        `${what}: only after the rollback, when recovery is required`,
      );
      return;
    case 'restart-agent':
      invariant(
        mode === 'sidecar' && observed.current === decision.into,
        `${what}: the sidecar restarts the agent into current`,
      );
      return;
    case 'wait':
      invariant(
        mode === 'self-hosted' && progress.restartedInto !== null,
        `${what}: waits only for a scheduled restart`,
      );
      return;
    case 'quarantine':
      invariant(
        record.failure !== null && decision.digest === record.candidateDigest && !observed.quarantined,
        `${what}: quarantines the failed candidate once`,
      );
      return;
  }
}
