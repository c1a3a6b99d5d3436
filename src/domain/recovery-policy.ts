import type { Sha256 } from './digest.js';
import type { ErrorCode } from './error-codes.js';
import { invariant } from './invariant.js';
import { redactUrlsInText } from './redacted-url.js';
import type { SlotName } from './slot.js';
import type { FailureReason, RecordedFailure, UpgradeRecord } from './upgrade-record.js';

/**
 * The RecoveryPolicy: the startup gate (docs/protocol.md#startup-gate-s1s8) and the recovery
 * command (docs/protocol.md#recovery-command-r1r3).
 *
 * Every function here is total and pure and returns the NEXT single decision: one durable effect
 * (or one measurement) at a time. The app executes it, re-observes the host, and calls again
 * until a terminal decision (`open-gate`, `ignore-own-record`, `wait`, `done`). The policy is
 * level-based: it trusts only the durable record and what the app observed just now, never
 * what an earlier process remembered, so every effect is a crash point whose outcome is fixed
 * by calling the policy again in the next process.
 *
 * Global rules, checked on every returned decision by `checkStartupDecision` /
 * `checkRecoverDecision`:
 * - publish before delete: `delete-record` only after this process published the terminal
 *   status (`progress.published`); after a crash the flag is false and the same status is
 *   published again (a no-op at the store);
 * - never downgrade: `roll-back` / `restore-container` only when `rollbackAllowed`;
 * - Complete only for the candidate, current, proven healthy, nspawn equal, state committed;
 * - the gate opens only when no record exists.
 */

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

export type AgentMode = 'self-hosted' | 'sidecar';

/**
 * The verdict of the health/stability wait for a slot, produced by the app's `measure-health`
 * effect (self-hosted: this daemon runs the candidate and survived the stability interval;
 * sidecar: the agent unit's main PID runs the candidate, stable for `health.stableMs`, within
 * `health.timeoutMs`). `unknown` = not measured by this process for this record yet. A verdict
 * is sticky for the rest of the process: the app measures once and never re-measures.
 */
export type HealthVerdict = 'healthy' | 'unhealthy' | 'unknown';

/**
 * The nspawn copy compared with the binary the current link resolves to, by digest:
 * `not-applicable` = the host has no active machine; `unknown` = not compared since the last
 * write. The app resets it to `unknown` after every effect that writes the current link or the
 * nspawn copy (`roll-back`, `sync-container`, `restore-container`), and sets it from
 * `check-container` (or from a check it chose to make up front).
 */
export type ContainerVerdict = 'equal' | 'differs' | 'not-applicable' | 'unknown';

/** The status to publish; structurally a `TerminalStatus` of the OperationStore port. */
export interface TerminalOutcome {
  readonly phase: 'Complete' | 'Failed';
  readonly reason: 'Succeeded' | FailureReason;
  /** Redacted. Fixed per outcome so that publishing it again is a no-op at the store. */
  readonly message: string;
}

/** Facts the app re-observes before every call. */
export interface StartupObservation {
  /** The slot the current link resolves to; `null` = dangling, unresolvable or not a slot. */
  readonly current: SlotName | null;
  /** The slot the last-good link resolves to; `null` = dangling, unresolvable or not a slot. */
  readonly lastGood: SlotName | null;
  /** Self-hosted: the slot this daemon's own executable resolves to (`null`: not a slot). */
  readonly self: SlotName | null;
  /** Sidecar: the slot the agent unit's main PID executes (`null`: not running / not a slot). */
  readonly agent: SlotName | null;
  readonly candidateHealth: HealthVerdict;
  readonly container: ContainerVerdict;
  /** The record's `candidateDigest` is in the state file's quarantine list. */
  readonly quarantined: boolean;
  /**
   * The state file already holds this record's commit (the candidate slot's digest and version,
   * the highest committed version). Used only to skip a repeated write, never to skip a check.
   */
  readonly stateCommitted: boolean;
}

/**
 * What THIS process already did for the current record. Memory, used only to avoid repeating
 * an effect within one run: after a crash every flag starts over and the policy repeats the
 * (idempotent) effect. The app resets all of it when the record is deleted or replaced.
 */
export interface RunProgress {
  /** The terminal status for this record was published by this process (404/gone counts). */
  readonly published: boolean;
  /** The slot whose binary this process copied into the nspawn rootfs (sync or restore). */
  readonly containerCopiedFrom: SlotName | null;
  /**
   * The slot the current link pointed at when this process last restarted the agent unit
   * (sidecar, including the managed path's row 8 when the same process continues) or
   * scheduled its own restart (self-hosted).
   */
  readonly restartedInto: SlotName | null;
}

export const NO_PROGRESS: RunProgress = { published: false, containerCopiedFrom: null, restartedInto: null };

export interface StartupInput {
  readonly record: UpgradeRecord | null;
  readonly mode: AgentMode;
  /** This daemon's instance id (new per process start). */
  readonly instanceId: string;
  /**
   * Whether this process handed the record over (scheduled its own restart). Only then is an
   * own undecided record left to the restarted process; a process whose upgrade stopped short of
   * the hand-over resolves its own record like any other. Absent means handed over.
   */
  readonly handedOver?: boolean;
  readonly observed: StartupObservation;
  readonly progress: RunProgress;
}

/**
 * The rule a decision comes from (docs/protocol.md#s1 … #s8); `own-record` is
 * docs/protocol.md#own-record.
 */
export type StartupRule = 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6' | 'S7' | 'S8' | 'own-record';

export type StartupDecision =
  /** No record: open the gate; host-changing reconciliation may run. Terminal. */
  | { readonly kind: 'open-gate'; readonly rule: StartupRule }
  /**
   * Self-hosted: an undecided record written by this very daemon (the old process after it
   * scheduled its restart). Leave it to the restarted process; keep the gate as it is. Terminal.
   */
  | { readonly kind: 'ignore-own-record'; readonly rule: StartupRule }
  /**
   * Write `withFailure(record, failure, recoveryRequired)` (keeps an existing failure, only raises
   * `recoveryRequired`). `failure` is exactly what the record holds afterwards.
   */
  | {
      readonly kind: 'record-failure';
      readonly rule: StartupRule;
      readonly failure: RecordedFailure;
      readonly recoveryRequired: boolean;
    }
  /** Measure the health/stability of `slot` (the candidate) and report the verdict. */
  | { readonly kind: 'measure-health'; readonly rule: StartupRule; readonly slot: SlotName }
  /** Copy `from` (the current link's binary) into the active nspawn rootfs. */
  | { readonly kind: 'sync-container'; readonly rule: StartupRule; readonly from: SlotName }
  /** Compare the nspawn copy with the current link's binary (`slot`) and report the verdict. */
  | { readonly kind: 'check-container'; readonly rule: StartupRule; readonly slot: SlotName }
  /** Record the commit in the state file: slot versions and digests, highest committed version. */
  | {
      readonly kind: 'commit-state';
      readonly rule: StartupRule;
      readonly slot: SlotName;
      readonly digest: Sha256 | null;
    }
  /** Point last-good at `to` if needed, then current at `to` (both atomic, idempotent). */
  | { readonly kind: 'roll-back'; readonly rule: StartupRule; readonly to: SlotName }
  /** Copy `from` (the last-good target, now current) into the nspawn rootfs: rollback's 2nd half. */
  | { readonly kind: 'restore-container'; readonly rule: StartupRule; readonly from: SlotName }
  /** Self-hosted: schedule this daemon's restart (transient unit); keep the record and the gate closed. */
  | { readonly kind: 'restart-into-last-good'; readonly rule: StartupRule; readonly slot: SlotName }
  /** Sidecar: `reset-failed` + restart the agent unit, which runs `into` (the current link). */
  | { readonly kind: 'restart-agent'; readonly rule: StartupRule; readonly into: SlotName }
  /** Nothing to do in this process (its restart is scheduled); gate closed. The app bounds the wait. */
  | { readonly kind: 'wait'; readonly rule: StartupRule; readonly reason: 'restart-scheduled' }
  /** Add the failed candidate's digest to the state file's quarantine (bounded list). */
  | { readonly kind: 'quarantine'; readonly rule: StartupRule; readonly digest: Sha256 }
  /** S4: write `completed` into the record — Complete becomes the decided outcome — before publishing it. */
  | { readonly kind: 'record-completion'; readonly rule: StartupRule }
  /** Publish the terminal status (bounded retries in the app; 404 counts as published). */
  | { readonly kind: 'publish'; readonly rule: StartupRule; readonly status: TerminalOutcome }
  /** Delete the record. Only ever returned after `progress.published`. */
  | { readonly kind: 'delete-record'; readonly rule: StartupRule };

export type StartupDecisionKind = StartupDecision['kind'];

// ---------------------------------------------------------------------------------------------
// Codes and messages the policy writes into the record (all from the closed ErrorCode set)
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Shared rules
// ---------------------------------------------------------------------------------------------

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
  if (observed.container === 'equal' || observed.container === 'not-applicable' || containerCopiedFrom === target)
    return null;
  return { kind: 'restore-container', from: target };
}

/** Impossible records (parseRecord and the record constructors already refuse them). */
function checkRecordShape(record: UpgradeRecord): void {
  invariant(!record.switchCommitted || record.candidate !== null, 'switchCommitted requires a candidate');
  invariant((record.candidate === null) === (record.previous === null), 'candidate and previous are set together');
  invariant(record.candidate === null || record.candidate !== record.previous, 'candidate and previous differ');
}

// ---------------------------------------------------------------------------------------------
// Startup (or resume) table S1–S8
// ---------------------------------------------------------------------------------------------

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
  if (record === null) return { kind: 'open-gate', rule: 'S1' };
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
      ? { kind: 'delete-record', rule: 'S4' }
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
  } else if (
    observed.candidateHealth === 'unknown' &&
    observed.agent !== candidate &&
    progress.restartedInto !== candidate
  ) {
    // The sidecar stopped between the switch and restarting the agent (row 7 → 8): the agent
    // still runs the previous binary. Restart it into the candidate once, then measure.
    return { kind: 'restart-agent', rule: 'S4', into: candidate };
  }
  if (observed.candidateHealth === 'unknown') return { kind: 'measure-health', rule: 'S4', slot: candidate };
  if (observed.candidateHealth === 'unhealthy') return recordFailure('S5', POLICY_FAILURES.unhealthy, true);

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
  return { kind: 'delete-record', rule: 'S8' };
}

function recordFailure(rule: StartupRule, failure: RecordedFailure, recoveryRequired: boolean): StartupDecision {
  return { kind: 'record-failure', rule, failure, recoveryRequired };
}

/**
 * The global rules for a startup decision. Throws `InvariantViolation` when one does not hold;
 * `decideStartup` checks every decision it returns, and tests call it on model runs.
 */
export function checkStartupDecision(input: StartupInput, decision: StartupDecision): void {
  const { record, observed, progress, mode } = input;
  const what = `${decision.kind} (${decision.rule})`;
  if (record === null) {
    invariant(decision.kind === 'open-gate', `${what}: without a record the only decision is open-gate`);
    return;
  }
  invariant(decision.kind !== 'open-gate', 'open-gate while a record exists');
  const candidate = record.candidate;
  const proven =
    record.failure === null &&
    candidate !== null &&
    observed.current === candidate &&
    observed.candidateHealth === 'healthy' &&
    (mode === 'sidecar' || observed.self === candidate);
  switch (decision.kind) {
    case 'ignore-own-record':
      invariant(
        mode === 'self-hosted' &&
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
    case 'sync-container':
    case 'check-container':
    case 'commit-state': {
      const slot = decision.kind === 'sync-container' ? decision.from : decision.slot;
      invariant(proven && slot === candidate, `${what}: only after the candidate is proven healthy`);
      if (decision.kind === 'commit-state')
        invariant(containerInSync(observed.container), `${what}: only after the nspawn copy is proven equal`);
      return;
    }
    case 'record-completion':
      invariant(
        proven && containerInSync(observed.container) && observed.stateCommitted,
        `${what}: Complete needs current == candidate, healthy, nspawn equal, state committed`,
      );
      return;
    case 'publish':
      invariant(!progress.published, `${what}: published twice in one run`);
      if (decision.status.phase === 'Complete') {
        invariant(record.completed, `${what}: Complete is published only once recorded as the outcome`);
      } else {
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
      return;
    case 'delete-record':
      invariant(progress.published, `${what}: publish before delete`);
      return;
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

function containerInSync(container: ContainerVerdict): boolean {
  return container === 'equal' || container === 'not-applicable';
}

// ---------------------------------------------------------------------------------------------
// `recover --message M` (run by the OnFailure unit through the recovery script)
// ---------------------------------------------------------------------------------------------

/**
 * Input of the recovery command. Lock handling stays in the app: when a live upgrader holds
 * the host lock, `recover` waits up to 2 × `health.timeoutMs` and then exits non-zero without
 * changes (the holder's own bounded health wait rolls back); the policy is consulted only with
 * the lock held.
 */
export interface RecoverInput {
  readonly record: UpgradeRecord | null;
  /** `--message M`; empty means the default. Redacted (URLs) and clamped before it is recorded. */
  readonly message: string;
  readonly observed: {
    readonly current: SlotName | null;
    readonly lastGood: SlotName | null;
    readonly container: ContainerVerdict;
  };
  readonly progress: {
    readonly containerCopiedFrom: SlotName | null;
    /** `reset-failed` + restart of the agent unit already done by this command. */
    readonly agentRestarted: boolean;
  };
}

export type RecoverRule = 'R1' | 'R3';

export type RecoverDecision =
  /** Exit 0. R1: no record — an ordinary agent failure must not change the selected binary. */
  | { readonly kind: 'done'; readonly rule: RecoverRule; readonly exitCode: 0 }
  | {
      readonly kind: 'record-failure';
      readonly rule: RecoverRule;
      readonly failure: RecordedFailure;
      readonly recoveryRequired: boolean;
    }
  | { readonly kind: 'roll-back'; readonly rule: RecoverRule; readonly to: SlotName }
  | { readonly kind: 'restore-container'; readonly rule: RecoverRule; readonly from: SlotName }
  /** `systemctl reset-failed` + restart of the agent unit; the next daemon runs S7/S8. */
  | { readonly kind: 'restart-agent'; readonly rule: RecoverRule };

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

/** The failure `recover --message M` records (DaemonFailed, E_SERVICE). */
export function recoverFailure(message: string): RecordedFailure {
  const text = redactUrlsInText(message).trim();
  return text === '' ? POLICY_FAILURES.recovered : daemonFailure('E_SERVICE', text);
}

export function checkRecoverDecision(input: RecoverInput, decision: RecoverDecision): void {
  const { record, observed, progress } = input;
  const what = `recover: ${decision.kind}`;
  if (record === null || record.completed) {
    invariant(decision.kind === 'done', `${what}: without an open record recover changes nothing`);
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
