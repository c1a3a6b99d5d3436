import type { Condition } from './rollout-status.js';

export interface WantedCondition {
  readonly type: string;
  readonly status: Condition['status'];
  readonly reason: string;
  readonly message: string;
}

/**
 * Conditions in a fixed order; a condition keeps its lastTransitionTime while its status stays
 * the same, so an unchanged world writes an unchanged status.
 */
export function buildConditions(
  previous: readonly Condition[],
  wanted: readonly WantedCondition[],
  observedGeneration: number,
  nowIso: string,
): Condition[] {
  return wanted.map((condition) => {
    const before = previous.find((entry) => entry.type === condition.type);
    const lastTransitionTime =
      before !== undefined && before.status === condition.status && before.lastTransitionTime !== ''
        ? before.lastTransitionTime
        : nowIso;
    return { ...condition, lastTransitionTime, observedGeneration };
  });
}
