import type { RolloutPlan } from '../decide/actions.js';
import { buildConditions } from '../status/conditions.js';
import { jsonEqual } from '../status/json-equal.js';
import type { PreviousStatus } from '../status/read-rollout-status.js';
import type { AgentRolloutStatus, RolloutCounts } from '../status/rollout-status.js';
import type { RolloutObject } from '../order/snapshot.js';
import type { SpecProblem } from './spec-problems.js';
import { formatTimestamp } from './time-text.js';
import { ROLLOUT_KIND } from './rollout-vocabulary.js';

const NO_COUNTS: RolloutCounts = {
  targets: 0,
  excluded: { optedOut: 0, alreadyAtTarget: 0, conflict: 0, vanished: 0, noArtifact: 0 },
  pending: 0,
  inFlight: 0,
  succeeded: 0,
  failed: 0,
  timedOut: 0,
  lost: 0,
  rolledBack: 0,
};

/**
 * An invalid spec stops the rollout where it is: nothing new is created (announced creates are
 * withdrawn), operations in flight run on, and the SpecValid condition lists every problem.
 */
export function planInvalidSpec(
  rollout: RolloutObject,
  previous: PreviousStatus,
  problems: readonly SpecProblem[],
  nowMs: number,
): RolloutPlan {
  const raw = (
    typeof previous.raw === 'object' && previous.raw !== null ? previous.raw : {}
  ) as Partial<AgentRolloutStatus>;
  const message = problems
    .slice(0, 10)
    .map((problem) => `${problem.path}: ${problem.message} (${problem.code})`)
    .join('; ');
  const conditions = buildConditions(
    previous.conditions,
    [{ type: 'SpecValid', status: 'False', reason: problems[0]?.code ?? 'E_FIELD_SHAPE', message }],
    rollout.generation,
    formatTimestamp(nowMs),
  );
  const status: AgentRolloutStatus = {
    ...raw,
    observedGeneration: rollout.generation,
    phase: previous.phase ?? 'Preview',
    progress: typeof raw.progress === 'string' ? raw.progress : '0/0',
    counts: raw.counts ?? NO_COUNTS,
    waves: previous.waves.map((wave) => ({
      ...wave,
      cursor: Math.max(0, wave.cursor - wave.pendingCreates.length),
      pendingCreates: [],
    })),
    failures: raw.failures ?? { sample: [], byReason: {}, byLabel: {} },
    conditions: [...conditions, ...previous.conditions.filter((condition) => condition.type !== 'SpecValid')],
  };
  if (jsonEqual(status, previous.raw)) return { actions: [], status, requeueAfterMs: null };
  const wasInvalid = previous.conditions.some(
    (condition) => condition.type === 'SpecValid' && condition.status === 'False',
  );
  const regarding = { kind: ROLLOUT_KIND, name: rollout.name, uid: rollout.uid } as const;
  return {
    actions: [
      { kind: 'UpdateRolloutStatus', name: rollout.name, resourceVersion: rollout.resourceVersion, status },
      ...(wasInvalid
        ? []
        : [
            {
              kind: 'RecordEvent' as const,
              event: { type: 'Warning' as const, reason: 'InvalidSpec' as const, message, regarding },
            },
          ]),
    ],
    status,
    requeueAfterMs: null,
  };
}
