import { DIVERSITY_LABELS } from '../spec/rollout-vocabulary.js';

/**
 * The order in which canary waves take their machines. Plain waves take them in the rollout's
 * hash order, which is stable across reconciles and restarts and shuffles machines independently
 * of their names. Canary waves spread over architectures and zones: the machines are grouped by
 * their combination of those label values, the groups are sequenced so that each next group
 * brings the values seen least so far (two groups already cover two architectures, three cover
 * three zones), and the order takes the first machine (in hash order) of every group in that
 * sequence, then the second of every group, and so on.
 *
 * The order depends only on the target machines and their labels — not on which of them have an
 * operation, are lost or already upgraded — so a wave can tell which machines it has passed from
 * its cursor alone, whatever happened to their operations since.
 */

export interface Orderable {
  readonly labels: Readonly<Record<string, string>>;
}

/** All of `items` (given in hash order) in canary order. */
export function diverseOrder<T extends Orderable>(items: readonly T[]): T[] {
  const groups = groupByCombination(items);
  const sequence = sequenceGroups(groups);
  const out: T[] = [];
  const longest = Math.max(0, ...groups.map((group) => group.members.length));
  for (let rank = 0; rank < longest; rank += 1) {
    for (const group of sequence) {
      const member = group.members[rank];
      if (member !== undefined) out.push(member);
    }
  }
  return out;
}

interface Group<T> {
  readonly values: readonly string[];
  /** In hash order; the first one's position breaks ties between groups. */
  readonly members: T[];
  readonly position: number;
}

function groupByCombination<T extends Orderable>(items: readonly T[]): Group<T>[] {
  const groups = new Map<string, Group<T>>();
  items.forEach((item, position) => {
    const values = DIVERSITY_LABELS.map((key) => item.labels[key] ?? '');
    const combination = values.join('\u0000');
    let group = groups.get(combination);
    if (group === undefined) {
      group = { values, members: [], position };
      groups.set(combination, group);
    }
    group.members.push(item);
  });
  return [...groups.values()];
}

/** Each next group is the one whose label values have been seen least; ties go to the earlier head. */
function sequenceGroups<T>(groups: readonly Group<T>[]): Group<T>[] {
  const seen = DIVERSITY_LABELS.map(() => new Map<string, number>());
  const left = [...groups];
  const out: Group<T>[] = [];
  while (left.length > 0) {
    let best = 0;
    let bestScore = Infinity;
    left.forEach((group, index) => {
      const score = group.values.reduce(
        (sum, value, dimension) => sum + ((seen[dimension] as Map<string, number>).get(value) ?? 0),
        0,
      );
      const current = left[best] as Group<T>;
      if (score < bestScore || (score === bestScore && group.position < current.position)) {
        best = index;
        bestScore = score;
      }
    });
    const [chosen] = left.splice(best, 1) as [Group<T>];
    chosen.values.forEach((value, dimension) => {
      const counts = seen[dimension] as Map<string, number>;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    });
    out.push(chosen);
  }
  return out;
}
