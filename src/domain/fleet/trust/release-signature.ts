import { isSha256 } from '../../common/digest.js';
import type { ErrorCode } from '../../common/error-codes.js';
import { isOneOf } from '../../common/one-of.js';
import type { RolloutEvent } from '../decide/actions.js';
import type { ReleaseObject } from '../order/snapshot.js';
import { ARCHITECTURES, type AgentReleaseSpec } from '../spec/release-spec.js';
import { isRecord } from '../spec/spec-problems.js';
import type { WantedCondition } from '../status/conditions.js';
import type { Condition } from '../status/rollout-status.js';
import type { ReleaseVerdict, SignedArtifact, SignedRelease } from './release-verdict.js';

/**
 * The trust verdict as the AgentRelease's status records it: `Validated` True with `status.signed`
 * (what was verified), or False with reason `Untrusted`. The status is the one place the verdict
 * lives, so the planner reads it from there and a restarted controller plans the same.
 */

/** The reasons of `Validated` under signed releases (True keeps the reason `Valid`). */
export const VALIDATED_UNTRUSTED = 'Untrusted';
export const VALIDATED_UNVERIFIED = 'Unverified';

/** What the controller could find out about a release this time. */
export type TrustCheck =
  | ReleaseVerdict
  /** The repository could not be read (a transport failure): the verdict before stands. */
  | { readonly kind: 'unavailable'; readonly code: ErrorCode; readonly message: string };

/** Whether a rollout may dispatch the release, as its status says. */
export type ReleaseTrustState = 'signed' | 'untrusted' | 'unverified';

/** The `Validated` condition (and the `signed` record) for a valid spec under signed releases. */
export function trustedValidation(
  check: TrustCheck,
  spec: AgentReleaseSpec,
  previousStatus: unknown,
): { readonly condition: WantedCondition; readonly signed: SignedRelease | null } {
  const type = 'Validated';
  if (check.kind === 'signed')
    return {
      condition: { type, status: 'True', reason: 'Valid', message: `version ${spec.versionText}, signed` },
      signed: check.signed,
    };
  if (check.kind === 'untrusted')
    return { condition: { type, status: 'False', reason: VALIDATED_UNTRUSTED, message: check.message }, signed: null };
  // Unreachable is not untrusted: the last verdict stands while it still describes this spec.
  const before = validatedOf(previousStatus);
  const signedBefore = readSignedRelease(previousStatus);
  if (before?.status === 'True' && signedBefore !== null && signedMatches(signedBefore, spec))
    return { condition: pick(before), signed: signedBefore };
  if (before?.status === 'False' && before.reason === VALIDATED_UNTRUSTED)
    return { condition: pick(before), signed: null };
  return {
    condition: {
      type,
      status: 'Unknown',
      reason: VALIDATED_UNVERIFIED,
      message: `the signed metadata could not be read (${check.code}); verifying again`,
    },
    signed: null,
  };
}

/**
 * Whether the release may be dispatched under signed releases: `Validated` True for its current
 * generation, with a `signed` record that covers this very spec (version, and every artifact's
 * architecture and digest); `untrusted` when the current generation was judged Untrusted.
 */
export function releaseTrustState(release: ReleaseObject, spec: AgentReleaseSpec): ReleaseTrustState {
  const validated = validatedOf(release.status);
  if (validated === null || validated.observedGeneration !== release.generation) return 'unverified';
  if (validated.status === 'False' && validated.reason === VALIDATED_UNTRUSTED) return 'untrusted';
  const signed = readSignedRelease(release.status);
  return validated.status === 'True' && signed !== null && signedMatches(signed, spec) ? 'signed' : 'unverified';
}

/** The `Validated` message of a release judged Untrusted (empty when it is not). */
export function untrustedMessage(release: ReleaseObject): string {
  const validated = validatedOf(release.status);
  return validated?.status === 'False' && validated.reason === VALIDATED_UNTRUSTED ? validated.message : '';
}

/** True when the record vouches for exactly this spec's version and artifacts. */
export function signedMatches(signed: SignedRelease, spec: AgentReleaseSpec): boolean {
  return (
    signed.version === spec.versionText &&
    signed.artifacts.length === spec.artifacts.length &&
    spec.artifacts.every((artifact) =>
      signed.artifacts.some((entry) => entry.arch === artifact.arch && entry.sha256 === artifact.sha256),
    )
  );
}

/** `status.signed`, or null when absent or malformed (a status is untrusted JSON). */
export function readSignedRelease(status: unknown): SignedRelease | null {
  const signed = isRecord(status) ? status['signed'] : undefined;
  if (!isRecord(signed) || typeof signed['version'] !== 'string' || !Array.isArray(signed['artifacts'])) return null;
  const artifacts: SignedArtifact[] = [];
  for (const entry of signed['artifacts'] as unknown[]) {
    if (!isRecord(entry)) return null;
    const { arch, targetPath, sha256 } = entry;
    if (!isOneOf(ARCHITECTURES, arch) || typeof targetPath !== 'string' || !isSha256(sha256)) return null;
    artifacts.push({ arch, targetPath, sha256 });
  }
  return { version: signed['version'], artifacts };
}

function validatedOf(status: unknown): Condition | null {
  const conditions = isRecord(status) && Array.isArray(status['conditions']) ? status['conditions'] : [];
  const found: unknown = conditions.find((entry: unknown) => isRecord(entry) && entry['type'] === 'Validated');
  if (!isRecord(found)) return null;
  const { status: value, reason, message, observedGeneration } = found;
  if (value !== 'True' && value !== 'False' && value !== 'Unknown') return null;
  return {
    type: 'Validated',
    status: value,
    reason: typeof reason === 'string' ? reason : '',
    message: typeof message === 'string' ? message : '',
    lastTransitionTime: typeof found['lastTransitionTime'] === 'string' ? found['lastTransitionTime'] : '',
    observedGeneration: typeof observedGeneration === 'number' ? observedGeneration : -1,
  };
}

function pick(condition: Condition): WantedCondition {
  return { type: condition.type, status: condition.status, reason: condition.reason, message: condition.message };
}

/** A Warning Event on the release when `next` judges it Untrusted and its status before did not. */
export function untrustedEvent(
  release: ReleaseObject,
  next: { readonly conditions: readonly Condition[] },
): RolloutEvent | null {
  const after = next.conditions.find((condition) => condition.type === 'Validated');
  if (after?.status !== 'False' || after.reason !== VALIDATED_UNTRUSTED) return null;
  if (untrustedMessage(release) !== '') return null;
  return {
    type: 'Warning',
    reason: 'Untrusted',
    message: `not dispatched: ${after.message}`,
    regarding: { kind: 'AgentRelease', name: release.name, uid: release.uid },
  };
}
