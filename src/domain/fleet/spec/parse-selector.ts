import type { LabelRequirement, LabelSelector } from '../../common/machine-selector.js';
import { checkKnownFields, isRecord, ProblemList } from './spec-problems.js';

const OPERATORS: readonly LabelRequirement['operator'][] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/**
 * `spec.targets.selector`, a Kubernetes label selector over Node objects. The semantics are the
 * daemon's (`selectorMatches`); this parser reports what is wrong instead of matching nothing.
 * An empty selector selects every Node, as in Kubernetes: it is accepted because it was written.
 */
export function parseTargetSelector(raw: unknown, path: string, problems: ProblemList): LabelSelector {
  const empty: LabelSelector = { matchLabels: {}, matchExpressions: [] };
  if (!isRecord(raw)) {
    problems.add('E_ROLLOUT_SELECTOR', path, 'must be a label selector object');
    return empty;
  }
  checkKnownFields(raw, ['matchLabels', 'matchExpressions'], path, problems);
  const matchLabels: Record<string, string> = {};
  const labels = raw['matchLabels'] ?? {};
  if (!isRecord(labels)) problems.add('E_ROLLOUT_SELECTOR', `${path}.matchLabels`, 'must map label keys to values');
  else
    for (const [key, value] of Object.entries(labels)) {
      if (typeof value === 'string') matchLabels[key] = value;
      else problems.add('E_ROLLOUT_SELECTOR', `${path}.matchLabels.${key}`, 'must be a string');
    }
  const expressions = raw['matchExpressions'] ?? [];
  if (!Array.isArray(expressions)) {
    problems.add('E_ROLLOUT_SELECTOR', `${path}.matchExpressions`, 'must be a list');
    return { matchLabels, matchExpressions: [] };
  }
  const matchExpressions = expressions.flatMap((entry: unknown, index) =>
    parseRequirement(entry, `${path}.matchExpressions[${index}]`, problems),
  );
  return { matchLabels, matchExpressions };
}

function parseRequirement(raw: unknown, path: string, problems: ProblemList): LabelRequirement[] {
  if (!isRecord(raw) || typeof raw['key'] !== 'string' || raw['key'] === '') {
    problems.add('E_ROLLOUT_SELECTOR', path, 'must have a key');
    return [];
  }
  const operator = raw['operator'] as LabelRequirement['operator'];
  if (!OPERATORS.includes(operator)) {
    problems.add('E_ROLLOUT_SELECTOR', `${path}.operator`, `must be one of ${OPERATORS.join(', ')}`);
    return [];
  }
  const values = raw['values'] ?? [];
  if (!Array.isArray(values) || !values.every((value): value is string => typeof value === 'string')) {
    problems.add('E_ROLLOUT_SELECTOR', `${path}.values`, 'must be a list of strings');
    return [];
  }
  if ((operator === 'In' || operator === 'NotIn') === (values.length === 0)) {
    problems.add('E_ROLLOUT_SELECTOR', `${path}.values`, 'In and NotIn need values; Exists and DoesNotExist take none');
    return [];
  }
  return [{ key: raw['key'], operator, values }];
}
