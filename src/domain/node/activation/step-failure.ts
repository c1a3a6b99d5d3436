import type { ActivationStep, ActivationStepKind } from './activation-steps.js';
import type { ErrorCode } from '../../common/error-codes.js';
import { invariant } from '../../common/invariant.js';
import type { SlotName } from '../layout/slot.js';

/** What the failure decision needs of a plan, direct or managed. */
export interface StepPlan {
  readonly steps: readonly ActivationStep[];
  /** The slot the plan moves current to (the running one for an identical candidate). */
  readonly targetSlot: SlotName;
  /** Where a failed activation returns; equal to `targetSlot` when there is nowhere else to go. */
  readonly rollbackSlot: SlotName;
}

export interface StepFailure {
  /** The index in the plan of the step that failed, or that was next when a signal ended the run. */
  readonly at: number;
  /** False when a signal ended the run before the step began: the step had no effect at all. */
  readonly started: boolean;
  readonly code: ErrorCode;
}

/**
 * What a failed step means (docs/protocol.md#step-failures). `propagate`: nothing the plan did
 * can make the candidate run, so the failure goes to the caller as it is (the direct path drops
 * its marker, the managed path records the failure and publishes it). `restore-current`: the
 * switch may have landed but nothing ran the candidate: current goes back to `to`, then the
 * failure propagates. `roll-back`: the agent, its service or its container may be on the
 * candidate: current, the service and the container copy go back to `to`; the candidate is
 * quarantined unless a signal, not the candidate, ended the activation.
 */
export type StepFailureDecision =
  | { readonly kind: 'propagate' }
  | { readonly kind: 'restore-current'; readonly to: SlotName }
  | { readonly kind: 'roll-back'; readonly to: SlotName; readonly quarantine: boolean };

/** Steps after which the service, its assets and the container follow current. */
const FOLLOW_UP_KINDS: readonly ActivationStepKind[] = [
  'update-service-assets',
  'restart-service',
  'wait-healthy',
  'watch-candidate',
  'sync-container',
];

/** Steps that start, judge or copy the target slot's binary: it may be what runs. */
const RUNS_TARGET_KINDS: readonly ActivationStepKind[] = [
  'restart-service',
  'wait-healthy',
  'watch-candidate',
  'sync-container',
];

/**
 * The failure table, the same for both paths; the first row that matches decides:
 *
 * | failed step | decision |
 * |---|---|
 * | any, when the rollback slot is the target slot | propagate |
 * | restart, health wait or container copy; or a follow-up step after the switch | roll-back |
 * | the switch itself (once begun), or a record write after it | restore-current |
 * | anything before the switch | propagate |
 */
export function decideStepFailure(plan: StepPlan, failure: StepFailure): StepFailureDecision {
  const step = plan.steps[failure.at];
  invariant(step !== undefined, `step ${failure.at} is not part of the plan`);
  // An identical candidate with last-good on the same slot: there is nothing else to go to.
  if (plan.rollbackSlot === plan.targetSlot) return { kind: 'propagate' };
  const switched = plan.steps.slice(0, failure.at).some((earlier) => earlier.kind === 'switch-current');
  if (RUNS_TARGET_KINDS.includes(step.kind) || (switched && FOLLOW_UP_KINDS.includes(step.kind)))
    return { kind: 'roll-back', to: plan.rollbackSlot, quarantine: failure.code !== 'E_INTERRUPTED' };
  // A switch that failed may still have moved the link (the rename landed, its fsync did not).
  if (switched || (step.kind === 'switch-current' && failure.started))
    return { kind: 'restore-current', to: plan.rollbackSlot };
  return { kind: 'propagate' };
}
