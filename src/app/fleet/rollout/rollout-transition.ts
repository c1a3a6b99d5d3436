import { failure, type Failure } from '../../../domain/common/failure.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { RolloutState } from '../../../domain/fleet/spec/rollout-spec.js';
import type { RolloutObject, RolloutSpecPatch } from '../../../ports/fleet/rollout-store.js';
import { rollbackReleaseOf, stateOf } from './rollout-view.js';

export const ROLLOUT_ACTIONS = ['pause', 'resume', 'abort', 'rollback'] as const;
export type RolloutAction = (typeof ROLLOUT_ACTIONS)[number];

/** The `spec.state` each command sets. */
export const TARGET_STATE: Readonly<Record<RolloutAction, RolloutState>> = {
  pause: 'Pause',
  resume: 'Run',
  abort: 'Abort',
  rollback: 'RollBack',
};

export type Transition =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'patch'; readonly patch: RolloutSpecPatch }
  | { readonly kind: 'refused'; readonly failure: Failure };

/**
 * What one command changes on the rollout as read, deciding before anything is sent what the
 * CEL rules of deploy/agentrollout-crd.yaml would refuse: from RollBack only Abort, from Abort only
 * RollBack, RollBack only with `spec.rollback` (and never back to Preview, which no command sets).
 * `resume` of a Halted rollout also sets `spec.resumeFromHalt` to `status.halt.id`: that is what
 * resumes a halt; a rollout already in the state asked for (and, for resume, already resumed
 * from its halt) is left unchanged.
 */
export function decideTransition(action: RolloutAction, rollout: RolloutObject): Transition {
  const current = stateOf(rollout);
  const target = TARGET_STATE[action];
  const resumeFromHalt = action === 'resume' ? haltToResume(rollout) : null;
  if (current === target && resumeFromHalt === null) return { kind: 'unchanged' };
  if (current !== target) {
    const refusal = refusalOf(rollout, current, target);
    if (refusal !== null) return { kind: 'refused', failure: refusal };
  }
  return {
    kind: 'patch',
    patch: { ...(current === target ? {} : { state: target }), ...(resumeFromHalt === null ? {} : { resumeFromHalt }) },
  };
}

/** The halt id to resume with: only while the status says Halted and the spec does not name that halt yet. */
function haltToResume(rollout: RolloutObject): string | null {
  const status = readPreviousStatus(rollout.status);
  if (status.phase !== 'Halted' || status.halt === null) return null;
  return rollout.spec['resumeFromHalt'] === status.halt.id ? null : status.halt.id;
}

function refusalOf(rollout: RolloutObject, current: RolloutState | null, target: RolloutState): Failure | null {
  const name = rollout.name;
  if (current === null) {
    return failure('E_TRANSITION_REFUSED', `rollout ${name} has an unknown spec.state; fix it with kubectl first`);
  }
  if (current === 'RollBack' && target !== 'Abort') {
    return failure(
      'E_TRANSITION_REFUSED',
      `rollout ${name} is rolling back (spec.state RollBack): a rollback cannot turn back into a rollout, only abort is allowed`,
    );
  }
  if (current === 'Abort' && target !== 'RollBack') {
    return failure(
      'E_TRANSITION_REFUSED',
      `rollout ${name} is aborted (spec.state Abort): it stays aborted, only rollback is allowed`,
    );
  }
  if (target === 'RollBack' && rollbackReleaseOf(rollout) === null) {
    return failure(
      'E_NO_ROLLBACK_RELEASE',
      `rollout ${name} names no release to roll back to (spec.rollback.releaseRef): add spec.rollback first`,
    );
  }
  return null;
}
