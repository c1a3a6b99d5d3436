import type { ActivationStep } from '../../../domain/node/activation/activation-steps.js';
import { failure, type Failure } from '../../../domain/common/failure.js';
import {
  decideStepFailure,
  type StepFailureDecision,
  type StepPlan,
} from '../../../domain/node/activation/step-failure.js';
import { asFailure, raise } from '../../common/failure-signal.js';

export type StepsOutcome =
  | { readonly kind: 'completed' }
  | {
      readonly kind: 'failed';
      readonly step: ActivationStep;
      /** What the step threw, rethrown as it is when the failure propagates. */
      readonly error: unknown;
      readonly cause: Failure;
      readonly decision: StepFailureDecision;
    };

/**
 * The step loop of both activation paths: a plan's steps in order, one durable effect each, up
 * to the first that fails; the domain then decides what the failure means (`decideStepFailure`)
 * and the caller carries the decision out. A signal is honoured between steps, never inside one
 * (a health wait ends at its next poll on its own), so no step is left half-done by it. A crash
 * or a programming error is not an outcome and propagates.
 */
export async function runSteps(
  plan: StepPlan,
  runStep: (step: ActivationStep) => Promise<void>,
  signal?: AbortSignal,
): Promise<StepsOutcome> {
  for (const [at, step] of plan.steps.entries()) {
    let started = false;
    try {
      if (signal?.aborted === true) raise(failure('E_INTERRUPTED', 'interrupted by a signal'));
      started = true;
      await runStep(step);
    } catch (error) {
      const cause = asFailure(error);
      const decision = decideStepFailure(plan, { at, started, code: cause.code });
      return { kind: 'failed', step, error, cause, decision };
    }
  }
  return { kind: 'completed' };
}
