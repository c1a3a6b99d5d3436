import type { Sha256 } from '../../common/digest.js';
import type { SlotName } from '../layout/slot.js';
import type { FailureReason, RecordedFailure, UpgradeRecord } from '../record/upgrade-record.js';
import type { RestartObservation, WatchWindow } from '../record/watch-window.js';

/**
 * The RecoveryPolicy's vocabulary: what the startup gate (docs/protocol.md#startup-gate-s1s8) and
 * the recovery command (docs/protocol.md#recovery-command-r1r3) are given and what they decide.
 *
 * Every policy function (startup-policy.ts, recover-policy.ts) is total and pure and returns the
 * NEXT single decision: one durable effect (or one measurement) at a time. The app executes it,
 * re-observes the host, and calls again until a terminal decision (`open-gate`,
 * `ignore-own-record`, `wait`, `done`). The policy is level-based: it trusts only the durable
 * record and what the app observed just now, never what an earlier process remembered, so every
 * effect is a crash point whose outcome is fixed by calling the policy again in the next process.
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

export type AgentMode = 'self-hosted' | 'sidecar';

/**
 * The verdict of the health/stability wait for a slot, produced by the app's `measure-health`
 * effect (self-hosted: this daemon runs the candidate and survived the stability interval;
 * sidecar: the agent unit's main PID runs the candidate, stable for `health.stableMs`, within
 * `health.timeoutMs`). `unknown` = not measured by this process for this record yet. A verdict
 * is sticky for the rest of the process: the app measures once and never re-measures. Not the
 * ServiceManager port's `HealthVerdict`, which is one wait's result with its evidence.
 */
export type CandidateHealth = 'healthy' | 'unhealthy' | 'unknown';

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
  readonly candidateHealth: CandidateHealth;
  readonly container: ContainerVerdict;
  /** The record's `candidateDigest` is in the state file's quarantine list. */
  readonly quarantined: boolean;
  /**
   * The state file already holds this record's commit (the candidate slot's digest and version,
   * the highest committed version). Used only to skip a repeated write, never to skip a check.
   */
  readonly stateCommitted: boolean;
  /**
   * The boot and the service manager's count of automatic restarts of the agent, observed while a
   * watch window is open (docs/protocol.md#watch-window); nulls otherwise.
   */
  readonly restarts: RestartObservation;
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
  /** This process told the cluster the operation is in its watch window. */
  readonly watchReported: boolean;
}

export const NO_PROGRESS: RunProgress = {
  published: false,
  containerCopiedFrom: null,
  restartedInto: null,
  watchReported: false,
};

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
  /** The watch-window document as it is on disk now (any owner), or null. */
  readonly watch: WatchWindow | null;
  /** `health.watchMs`: the window a newly proven candidate gets; 0 = none. */
  readonly watchMs: number;
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
  /**
   * Open the watch window for the proven candidate: write the window document with the boot and
   * the restart count observed now. `digest` null: the app takes the slot's.
   */
  | {
      readonly kind: 'start-watch';
      readonly rule: StartupRule;
      readonly slot: SlotName;
      readonly digest: Sha256 | null;
      readonly windowMs: number;
    }
  /** Write the boot and restart count observed now as the window's baseline (after a reboot). */
  | { readonly kind: 'rebase-watch'; readonly rule: StartupRule }
  /** Mark the operation InProgress with the condition `Watching` (once per process). */
  | { readonly kind: 'report-watching'; readonly rule: StartupRule }
  /**
   * Watch `slot` for `sliceMs`: healthy throughout adds the slice to the window's progress;
   * otherwise the candidate's health becomes `unhealthy`.
   */
  | { readonly kind: 'watch'; readonly rule: StartupRule; readonly slot: SlotName; readonly sliceMs: number }
  /** Delete the watch-window document (before the record; or left behind without one). */
  | { readonly kind: 'delete-watch'; readonly rule: StartupRule }
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

/**
 * Input of the recovery command (`recover --message M`, run by the OnFailure unit through the
 * recovery script). Lock handling stays in the app: when a live upgrader holds the host lock,
 * `recover` waits up to 2 × `health.timeoutMs` and then exits non-zero without changes (the
 * holder's own bounded health wait rolls back); the policy is consulted only with the lock held.
 */
export interface RecoverInput {
  readonly record: UpgradeRecord | null;
  /**
   * The record as `recover` read it when it started, before it waited for the lock: the failure
   * that started it belongs to this record's candidate or to an older binary, never to a
   * candidate switched to since.
   */
  readonly recordAtStart: UpgradeRecord | null;
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
