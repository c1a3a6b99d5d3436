import { buildConditions } from './conditions.js';
import { isRecord } from '../spec/spec-problems.js';
import { jsonEqual } from './json-equal.js';
import { parseReleaseSpec } from '../spec/release-spec.js';
import type { Condition } from './rollout-status.js';
import type { ReleaseObject } from '../order/snapshot.js';
import { formatTimestamp } from '../spec/time-text.js';

/**
 * An AgentRelease's status: `Validated` says whether the spec can be dispatched (and why not),
 * `Quarantined` mirrors `spec.quarantine`, which a halted rollout sets and only a person lifts.
 */
export interface AgentReleaseStatus {
  readonly observedGeneration: number;
  readonly conditions: readonly Condition[];
}

export interface ReleaseStatusUpdate {
  readonly kind: 'UpdateReleaseStatus';
  readonly name: string;
  readonly resourceVersion: string;
  readonly status: AgentReleaseStatus;
}

export function planReleaseStatus(release: ReleaseObject, nowMs: number): ReleaseStatusUpdate | null {
  const parsed = parseReleaseSpec(release.spec);
  const previous =
    isRecord(release.status) && Array.isArray(release.status['conditions']) ? release.status['conditions'] : [];
  const before = previous.filter(
    (entry): entry is Condition =>
      isRecord(entry) && typeof entry['type'] === 'string' && typeof entry['status'] === 'string',
  );
  const quarantine = parsed.ok ? parsed.value.quarantine : { quarantined: false, reason: '' };
  const conditions = buildConditions(
    before,
    [
      parsed.ok
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
  const status: AgentReleaseStatus = { observedGeneration: release.generation, conditions };
  if (jsonEqual(status, release.status)) return null;
  return { kind: 'UpdateReleaseStatus', name: release.name, resourceVersion: release.resourceVersion, status };
}
