import type { ReleaseFacts } from '../order/fleet.js';
import { parseReleaseSpec, type AgentReleaseSpec } from '../spec/release-spec.js';
import type { ReleaseSnapshot } from '../status/rollout-status.js';
import type { ReleaseObject } from '../order/snapshot.js';

/**
 * The release a rollout may dispatch. Once a rollout has started it keeps a snapshot of the
 * release (name, uid, version): a release deleted and re-created under the same name, with other
 * artifacts, is a different release and is never dispatched in its place.
 */

export type ReleaseProblem = 'ReleaseNotFound' | 'ReleaseInvalid' | 'ReleaseChanged';

export interface ResolvedRelease {
  readonly facts: ReleaseFacts;
  /** What to keep in status; `null` while nothing valid was seen. */
  readonly snapshot: ReleaseSnapshot | null;
  readonly spec: AgentReleaseSpec | null;
  readonly problem: { readonly reason: ReleaseProblem; readonly message: string } | null;
  readonly quarantined: boolean;
}

export function resolveRelease(
  name: string,
  object: ReleaseObject | null,
  remembered: ReleaseSnapshot | null,
): ResolvedRelease {
  const fallback = (reason: ReleaseProblem, message: string): ResolvedRelease => ({
    facts: { version: remembered?.version ?? null, artifacts: null },
    snapshot: remembered,
    spec: null,
    problem: { reason, message },
    quarantined: false,
  });
  if (object === null || object.name !== name) {
    return fallback('ReleaseNotFound', `AgentRelease ${name} does not exist`);
  }
  const parsed = parseReleaseSpec(object.spec);
  if (!parsed.ok) {
    const codes = [...new Set(parsed.problems.map((problem) => problem.code))].join(', ');
    return fallback('ReleaseInvalid', `AgentRelease ${name} is invalid (${codes})`);
  }
  const spec = parsed.value;
  if (remembered !== null && (remembered.uid !== object.uid || remembered.version !== spec.versionText)) {
    return fallback(
      'ReleaseChanged',
      `AgentRelease ${name} is not the release this rollout started with (version ${remembered.version})`,
    );
  }
  return {
    facts: { version: spec.versionText, artifacts: spec.artifacts },
    snapshot: { name, uid: object.uid, version: spec.versionText },
    spec,
    problem: null,
    quarantined: spec.quarantine.quarantined,
  };
}
