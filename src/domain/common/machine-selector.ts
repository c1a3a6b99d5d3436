/**
 * Which MachineOperations address this machine
 * (docs/operations.md#the-daemon-and-machineoperations): `spec.machineRef` equal to the machine's
 * name, or else a Kubernetes label selector matched against the local Node's labels.
 */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly LabelRequirement[];
}

export type MachineTarget =
  | { readonly kind: 'machine-ref'; readonly name: string }
  | { readonly kind: 'selector'; readonly selector: LabelSelector }
  /** Neither, both, or a malformed selector: addresses nobody (never guessed at). */
  | { readonly kind: 'invalid' };

/** Kubernetes semantics: every matchLabels pair and every expression must hold; empty matches all. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels)) {
    if (labels[key] !== value) return false;
  }
  return selector.matchExpressions.every((requirement) => requirementHolds(requirement, labels));
}

function requirementHolds(requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const present = Object.prototype.hasOwnProperty.call(labels, requirement.key);
  const value = present ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
  }
}

/**
 * Whether an operation with `target` addresses the machine named `machineName` whose Node has
 * `nodeLabels` (`null`: the Node could not be read, so no selector can match).
 */
export function targetsMachine(
  target: MachineTarget,
  machineName: string,
  nodeLabels: Readonly<Record<string, string>> | null,
): boolean {
  switch (target.kind) {
    case 'machine-ref':
      return target.name === machineName;
    case 'selector':
      return nodeLabels !== null && selectorMatches(target.selector, nodeLabels);
    case 'invalid':
      return false;
  }
}

/** Reads `spec.machineRef` / `spec.machineSelector` from untrusted JSON. */
export function machineTargetOf(spec: unknown): MachineTarget {
  if (!isRecord(spec)) return { kind: 'invalid' };
  const ref = spec['machineRef'];
  const selector = spec['machineSelector'];
  if (typeof ref === 'string' && ref !== '' && selector === undefined) return { kind: 'machine-ref', name: ref };
  if (ref !== undefined || !isRecord(selector)) return { kind: 'invalid' };
  const parsed = parseSelector(selector);
  return parsed === null ? { kind: 'invalid' } : { kind: 'selector', selector: parsed };
}

function parseSelector(value: Record<string, unknown>): LabelSelector | null {
  const rawLabels = value['matchLabels'] ?? {};
  const rawExpressions = value['matchExpressions'] ?? [];
  if (!isRecord(rawLabels) || !Array.isArray(rawExpressions)) return null;
  const matchLabels: Record<string, string> = {};
  for (const [key, label] of Object.entries(rawLabels)) {
    if (typeof label !== 'string') return null;
    matchLabels[key] = label;
  }
  const matchExpressions: LabelRequirement[] = [];
  for (const raw of rawExpressions) {
    if (!isRecord(raw) || typeof raw['key'] !== 'string') return null;
    const operator = raw['operator'];
    if (operator !== 'In' && operator !== 'NotIn' && operator !== 'Exists' && operator !== 'DoesNotExist') return null;
    const values = raw['values'] ?? [];
    if (!Array.isArray(values) || !values.every((entry): entry is string => typeof entry === 'string')) return null;
    // Kubernetes rejects In/NotIn without values and Exists/DoesNotExist with values.
    if ((operator === 'In' || operator === 'NotIn') === (values.length === 0)) return null;
    matchExpressions.push({ key: raw['key'], operator, values });
  }
  return { matchLabels, matchExpressions };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
