import { buildConditions, type WantedCondition } from './conditions.js';
import type { ResolvedRelease } from '../decide/resolve-release.js';
import type { AgentRolloutSpec } from '../spec/rollout-spec.js';
import type { Condition, RolloutCounts } from './rollout-status.js';

/**
 * The rollout's conditions: the spec is valid, the release (and the rollback release) can be
 * dispatched, and the release has an artifact for every target architecture. Each says what to
 * fix when it is False.
 */
export function rolloutConditions(
  world: {
    readonly spec: AgentRolloutSpec;
    readonly release: ResolvedRelease;
    readonly rollbackRelease: ResolvedRelease | null;
  },
  counts: RolloutCounts,
  previous: readonly Condition[],
  generation: number,
  nowIso: string,
): Condition[] {
  const wanted: WantedCondition[] = [
    { type: 'SpecValid', status: 'True', reason: 'Valid', message: 'the spec is valid' },
    releaseCondition('ReleaseReady', world.release),
  ];
  if (world.rollbackRelease !== null) wanted.push(releaseCondition('RollbackReleaseReady', world.rollbackRelease));
  const missing = counts.excluded.noArtifact;
  wanted.push(
    missing === 0
      ? { type: 'ArtifactsCoverTargets', status: 'True', reason: 'Covered', message: 'every target has an artifact' }
      : {
          type: 'ArtifactsCoverTargets',
          status: 'False',
          reason: 'NoArtifact',
          message: `${missing} target machine(s) have an architecture the release has no artifact for; they are skipped`,
        },
  );
  return buildConditions(previous, wanted, generation, nowIso);
}

function releaseCondition(type: string, release: ResolvedRelease): WantedCondition {
  if (release.problem !== null) {
    return { type, status: 'False', reason: release.problem.reason, message: release.problem.message };
  }
  if (release.quarantined) {
    const reason = release.spec?.quarantine.reason ?? '';
    return { type, status: 'False', reason: 'ReleaseQuarantined', message: `quarantined: ${reason}` };
  }
  return { type, status: 'True', reason: 'Resolved', message: `version ${release.snapshot?.version ?? ''}` };
}
