import { failure, type Failure } from '../../../domain/common/failure.js';
import { parseRolloutSpec } from '../../../domain/fleet/spec/parse-rollout-spec.js';
import { ANNOTATION_APPROVE_WAVE } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import type { RolloutPhase } from '../../../domain/fleet/status/rollout-status.js';
import type { ReleaseObject, ReleaseQuarantine, RolloutObject } from '../../../ports/fleet/rollout-store.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';

/** The most a quarantine's reason may hold (the AgentRelease CRD's `maxLength`). */
export const QUARANTINE_REASON_MAX = 1024;

/** Phases in which a wave can be waiting for, or soon need, a person's approval. */
const APPROVABLE: readonly RolloutPhase[] = ['Progressing', 'Baking', 'AwaitingApproval', 'WaitingForWindow'];

export type Decision<T> =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'write'; readonly value: T }
  | { readonly kind: 'refused'; readonly failure: Failure };

/**
 * Which wave `rollout approve` approves: the current one, when its gate is Manual and the rollout
 * moves forward. The approval is the annotation naming that wave (what `kubectl annotate` would
 * set); it may come while the wave still runs or bakes, and is unchanged when already given.
 */
export function decideApproval(rollout: RolloutObject): Decision<{ readonly wave: string }> {
  const phase = readPreviousStatus(rollout.status).phase;
  const wave = currentWave(rollout.status);
  const refuse = (why: string): Decision<{ wave: string }> => ({
    kind: 'refused',
    failure: failure('E_TRANSITION_REFUSED', `rollout ${rollout.name} ${why}: there is nothing to approve`),
  });
  if (phase === null || !APPROVABLE.includes(phase)) {
    return refuse(`is ${phase ?? 'not reported on yet'} (approval is for a rollout moving forward)`);
  }
  if (wave === null) return refuse('has no current wave');
  const spec = parseRolloutSpec(rollout.spec);
  const gate = spec.ok ? spec.value.strategy.waves.find((entry) => entry.name === wave)?.gate : undefined;
  if (gate !== 'Manual') return refuse(`is in wave ${wave}, whose gate is not Manual`);
  if (rollout.annotations[ANNOTATION_APPROVE_WAVE] === wave) return { kind: 'unchanged' };
  return { kind: 'write', value: { wave } };
}

/**
 * `release quarantine` and `release unquarantine`: the quarantine to write, unchanged when the
 * release is already so (the reason of a standing quarantine is kept, so a repeat is a no-op).
 */
export function decideQuarantine(release: ReleaseObject, wanted: ReleaseQuarantine): Decision<ReleaseQuarantine> {
  if (wanted.reason.length > QUARANTINE_REASON_MAX) {
    return {
      kind: 'refused',
      failure: failure('E_USAGE', `--reason holds at most ${QUARANTINE_REASON_MAX} characters`),
    };
  }
  const current = quarantineOf(release);
  if (current.quarantined === wanted.quarantined) return { kind: 'unchanged' };
  return { kind: 'write', value: wanted };
}

/** `spec.quarantine` as read; a missing or malformed one is no quarantine, as the controller reads it. */
export function quarantineOf(release: ReleaseObject): ReleaseQuarantine {
  const raw = release.spec['quarantine'];
  const quarantine = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return {
    quarantined: quarantine['quarantined'] === true,
    reason: typeof quarantine['reason'] === 'string' ? quarantine['reason'] : '',
  };
}

function currentWave(status: unknown): string | null {
  const wave =
    typeof status === 'object' && status !== null ? (status as Record<string, unknown>)['currentWave'] : null;
  return typeof wave === 'string' && wave !== '' ? wave : null;
}
