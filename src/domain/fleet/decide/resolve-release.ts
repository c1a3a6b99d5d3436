import type { ReleaseFacts } from '../order/fleet.js';
import { parseReleaseSpec, type AgentReleaseSpec } from '../spec/release-spec.js';
import type { ReleaseSnapshot } from '../status/rollout-status.js';
import type { ReleaseObject } from '../order/snapshot.js';
import { releaseTrustState, untrustedMessage } from '../trust/release-signature.js';

/**
 * The release a rollout may dispatch. Once a rollout has started it keeps a snapshot of the
 * release (name, uid, version): a release deleted and re-created under the same name, with other
 * artifacts, is a different release and is never dispatched in its place. Under signed releases
 * (`signedOnly`) the release's own status must also say it was verified against the signed
 * metadata (release-signature.ts): Untrusted, or not verified yet, is dispatched nowhere.
 */

export type ReleaseProblem =
  'ReleaseNotFound' | 'ReleaseInvalid' | 'ReleaseChanged' | 'ReleaseUntrusted' | 'ReleaseUnverified';

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
  signedOnly = false,
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
  const facts = { version: spec.versionText, artifacts: spec.artifacts };
  const trust = signedOnly ? releaseTrustState(object, spec) : null;
  if (trust === 'untrusted' || trust === 'unverified') {
    // The spec is valid and known: the fleet is counted against it, but nothing is dispatched.
    const problem =
      trust === 'untrusted'
        ? {
            reason: 'ReleaseUntrusted' as const,
            message: `AgentRelease ${name} is Untrusted: ${untrustedMessage(object)}`,
          }
        : {
            reason: 'ReleaseUnverified' as const,
            message: `AgentRelease ${name} is not verified against the signed metadata yet`,
          };
    return { facts, snapshot: remembered, spec: null, problem, quarantined: spec.quarantine.quarantined };
  }
  return {
    facts,
    snapshot: { name, uid: object.uid, version: spec.versionText },
    spec,
    problem: null,
    quarantined: spec.quarantine.quarantined,
  };
}
