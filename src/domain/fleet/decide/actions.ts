import type { MachineOperationManifest } from './child-manifest.js';
import type { AgentRolloutStatus } from '../status/rollout-status.js';

/**
 * What a plan asks the controller to do, in order. The status update always comes first and is
 * guarded by the rollout's resourceVersion: it records the creates that follow (pendingCreates)
 * and advances the wave cursors before any of them is made, so a stale cache (409) or a crash
 * between the update and a create can never put more operations in flight than the caps allow.
 * When the update fails, the controller drops the rest of the plan and plans again.
 */

export const EVENT_REASONS = [
  'PreviewReady',
  'WaveStarted',
  'WaveCompleted',
  'WaveBaking',
  'WaitingForWindow',
  'AwaitingApproval',
  'RolloutProgressing',
  'RolloutPaused',
  'RolloutAborted',
  'RolloutSucceeded',
  'FailureBudgetExceeded',
  'MaxUnavailableReached',
  'OperationsStalled',
  'InvalidParameters',
  'ReleaseQuarantined',
  'Untrusted',
  'AnalysisFailed',
  'RolloutHalted',
  'RolloutResumed',
  'RollbackStarted',
  'RolledBack',
  'RollbackFailed',
  'OperationsLost',
  'MachinesVanished',
  'ReleaseUnavailable',
  'InvalidSpec',
  /** On a release the controller verified: a role of the trusted metadata expires within a week. */
  'TrustMetadataExpiring',
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

export interface EventSubject {
  readonly kind: 'AgentRollout' | 'AgentRelease';
  readonly name: string;
  readonly uid: string;
}

export interface RolloutEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: EventReason;
  readonly message: string;
  readonly regarding: EventSubject;
}

export type RolloutAction =
  | {
      readonly kind: 'UpdateRolloutStatus';
      readonly name: string;
      readonly resourceVersion: string;
      readonly status: AgentRolloutStatus;
    }
  /** A merge patch of `spec.quarantine` only: the one field of a release that may change. */
  | {
      readonly kind: 'QuarantineRelease';
      readonly name: string;
      readonly quarantine: { readonly quarantined: true; readonly reason: string };
    }
  | { readonly kind: 'CreateOperation'; readonly operation: MachineOperationManifest }
  | { readonly kind: 'RecordEvent'; readonly event: RolloutEvent };

export interface RolloutPlan {
  readonly actions: readonly RolloutAction[];
  /** The status as it will be once the update is applied (equal to the current one when none is). */
  readonly status: AgentRolloutStatus;
  /** Plan again after this long even if nothing changes (a timeout, a bake, a window); `null`: on change only. */
  readonly requeueAfterMs: number | null;
}
