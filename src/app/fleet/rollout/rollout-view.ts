import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import { ROLLOUT_STATES, type RolloutState } from '../../../domain/fleet/spec/rollout-spec.js';
import type { RolloutPhase } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutObject } from '../../../ports/fleet/rollout-store.js';
import { isOneOf } from '../../../domain/common/one-of.js';

/** What `rollout status` reports: the status exactly as read, with the few spec fields that frame it. */
export interface RolloutView {
  readonly name: string;
  readonly resourceVersion: string;
  readonly generation: number | null;
  /** `spec.releaseRef.name`. */
  readonly release: string | null;
  /** `spec.state`: what the operator asked for. */
  readonly state: RolloutState | null;
  readonly resumeFromHalt: string;
  /** `status.phase`: what the controller last reported; `null` before it wrote a status. */
  readonly phase: RolloutPhase | null;
  /** The status as read (untrusted JSON, `null` when there is none). */
  readonly status: unknown;
  /** `metadata.annotations`: the approval of a manual gate is one. */
  readonly annotations: Readonly<Record<string, string>>;
  /** `metadata.creationTimestamp`, or `null`. */
  readonly createdAt: string | null;
  /** The spec as read (untrusted JSON): the schedule says when a closed window opens. */
  readonly spec: Readonly<Record<string, unknown>>;
  /** Wall-clock milliseconds of the read: what "in 12m" and an age count from. */
  readonly readAtMs: number;
}

export function viewOf(rollout: RolloutObject, readAtMs: number): RolloutView {
  const { spec } = rollout;
  const releaseRef = spec['releaseRef'];
  const release =
    typeof releaseRef === 'object' && releaseRef !== null ? (releaseRef as Record<string, unknown>)['name'] : null;
  return {
    name: rollout.name,
    resourceVersion: rollout.resourceVersion,
    generation: rollout.generation,
    release: typeof release === 'string' ? release : null,
    state: stateOf(rollout),
    resumeFromHalt: typeof spec['resumeFromHalt'] === 'string' ? spec['resumeFromHalt'] : '',
    phase: readPreviousStatus(rollout.status).phase,
    status: rollout.status,
    annotations: rollout.annotations,
    createdAt: rollout.createdAt,
    spec: rollout.spec,
    readAtMs,
  };
}

/** `spec.state`, `Preview` when unset (the CRD's default); `null` when it holds no known state. */
export function stateOf(rollout: RolloutObject): RolloutState | null {
  const state = rollout.spec['state'] ?? 'Preview';
  return isOneOf(ROLLOUT_STATES, state) ? state : null;
}

/** The rollback release `spec.rollback.releaseRef.name`, or `null` when the spec names none. */
export function rollbackReleaseOf(rollout: RolloutObject): string | null {
  const rollback = rollout.spec['rollback'];
  if (typeof rollback !== 'object' || rollback === null) return null;
  const ref = (rollback as Record<string, unknown>)['releaseRef'];
  const name = typeof ref === 'object' && ref !== null ? (ref as Record<string, unknown>)['name'] : undefined;
  return typeof name === 'string' && name !== '' ? name : null;
}
