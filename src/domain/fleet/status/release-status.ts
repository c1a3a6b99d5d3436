import { buildConditions } from './conditions.js';
import { isRecord } from '../spec/spec-problems.js';
import { jsonEqual } from './json-equal.js';
import { parseReleaseSpec } from '../spec/release-spec.js';
import type { Condition } from './rollout-status.js';
import type { ReleaseObject } from '../order/snapshot.js';
import { formatTimestamp } from '../spec/time-text.js';
import { trustedValidation, type TrustCheck } from '../trust/release-signature.js';
import type { SignedRelease } from '../trust/release-verdict.js';

/**
 * An AgentRelease's status: `Validated` says whether the spec can be dispatched (and why not),
 * `Quarantined` mirrors `spec.quarantine`, which a halted rollout sets and only a person lifts.
 * Under signed releases `Validated` is also the trust verdict, and `signed` what was verified.
 */
export interface AgentReleaseStatus {
  readonly observedGeneration: number;
  readonly conditions: readonly Condition[];
  readonly signed?: SignedRelease;
}

export interface ReleaseStatusUpdate {
  readonly kind: 'UpdateReleaseStatus';
  readonly name: string;
  readonly resourceVersion: string;
  readonly status: AgentReleaseStatus;
}

/**
 * The status to write, or null when the stored one is it. `trust` is what the controller found
 * against the signed metadata (release-signature.ts); `null` without signed releases, and then
 * a valid spec is all `Validated` says.
 */
export function planReleaseStatus(
  release: ReleaseObject,
  nowMs: number,
  trust: TrustCheck | null = null,
): ReleaseStatusUpdate | null {
  const parsed = parseReleaseSpec(release.spec);
  const previous =
    isRecord(release.status) && Array.isArray(release.status['conditions']) ? release.status['conditions'] : [];
  const before = previous.filter(
    (entry): entry is Condition =>
      isRecord(entry) && typeof entry['type'] === 'string' && typeof entry['status'] === 'string',
  );
  const quarantine = parsed.ok ? parsed.value.quarantine : { quarantined: false, reason: '' };
  const verified = parsed.ok && trust !== null ? trustedValidation(trust, parsed.value, release.status) : null;
  const conditions = buildConditions(
    before,
    [
      verified !== null
        ? verified.condition
        : parsed.ok
          ? { type: 'Validated', status: 'True', reason: 'Valid', message: `version ${parsed.value.versionText}` }
          : {
              type: 'Validated',
              status: 'False',
              reason: parsed.problems[0]?.code ?? 'E_FIELD_SHAPE',
              message: parsed.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; '),
            },
      quarantine.quarantined
        ? { type: 'Quarantined', status: 'True', reason: 'Quarantined', message: quarantine.reason }
        : { type: 'Quarantined', status: 'False', reason: 'NotQuarantined', message: 'the release may be dispatched' },
    ],
    release.generation,
    formatTimestamp(nowMs),
  );
  const signed = verified?.signed ?? null;
  const status: AgentReleaseStatus = {
    observedGeneration: release.generation,
    conditions,
    ...(signed !== null && { signed }),
  };
  if (jsonEqual(status, release.status)) return null;
  return { kind: 'UpdateReleaseStatus', name: release.name, resourceVersion: release.resourceVersion, status };
}
