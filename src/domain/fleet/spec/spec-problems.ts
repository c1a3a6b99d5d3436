/**
 * Validation of untrusted AgentRelease and AgentRollout specs: every problem is data with a
 * stable code and the path of the field, so the controller can put them in a condition and tests
 * can assert on codes. The codes are the rollout's own closed set; they never reach a CLI exit
 * code, so they live beside the resources they describe.
 */

export const VALIDATION_CODES = [
  'E_FIELD_SHAPE',
  'E_FIELD_UNKNOWN',
  'E_ROLLOUT_RELEASE_REF',
  'E_ROLLOUT_SELECTOR',
  'E_ROLLOUT_STATE',
  'E_ROLLOUT_WAVES',
  'E_ROLLOUT_WAVE_NAME',
  'E_ROLLOUT_WAVE_SIZE',
  'E_ROLLOUT_AMOUNT',
  'E_ROLLOUT_DURATION',
  'E_ROLLOUT_GATE',
  'E_ROLLOUT_ON_FAILURE',
  'E_ROLLOUT_ROLLBACK',
  'E_ROLLOUT_WINDOW',
  'E_ROLLOUT_ANALYSIS',
  'E_ROLLOUT_CONDITION',
  'E_RELEASE_VERSION',
  'E_RELEASE_ARTIFACT',
  'E_RELEASE_URL',
  'E_RELEASE_DIGEST',
  'E_RELEASE_QUARANTINE',
] as const;

export type ValidationCode = (typeof VALIDATION_CODES)[number];

export interface SpecProblem {
  readonly code: ValidationCode;
  /** The field, e.g. `spec.strategy.waves[1].percent`. */
  readonly path: string;
  readonly message: string;
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly SpecProblem[] };

/** Collects problems while a parser walks the object, so one pass reports all of them. */
export class ProblemList {
  private readonly found: SpecProblem[] = [];

  add(code: ValidationCode, path: string, message: string): void {
    this.found.push({ code, path, message });
  }

  get size(): number {
    return this.found.length;
  }

  /** The problems so far, as a failed parse (at least one must have been added). */
  fail<T>(): Parsed<T> {
    return { ok: false, problems: [...this.found] };
  }

  result<T>(value: T): Parsed<T> {
    return this.found.length === 0 ? { ok: true, value } : { ok: false, problems: [...this.found] };
  }
}

export type Json = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reports fields the API does not define: a typo must not silently mean "use the default". */
export function checkKnownFields(object: Json, known: readonly string[], path: string, problems: ProblemList): void {
  for (const key of Object.keys(object)) {
    if (!known.includes(key)) problems.add('E_FIELD_UNKNOWN', `${path}.${key}`, `unknown field "${key}"`);
  }
}

/** An object field; absent gives `{}`-like `null`, a non-object is a problem. */
export function objectField(object: Json, key: string, path: string, problems: ProblemList): Json | null {
  const value = object[key];
  if (value === undefined) return null;
  if (!isRecord(value)) {
    problems.add('E_FIELD_SHAPE', `${path}.${key}`, 'must be an object');
    return null;
  }
  return value;
}

export function stringField(
  object: Json,
  key: string,
  path: string,
  problems: ProblemList,
  code: ValidationCode,
): string | null {
  const value = object[key];
  if (value === undefined) return null;
  if (typeof value !== 'string') {
    problems.add(code, `${path}.${key}`, 'must be a string');
    return null;
  }
  return value;
}

export function booleanField(object: Json, key: string, path: string, problems: ProblemList): boolean | null {
  const value = object[key];
  if (value === undefined) return null;
  if (typeof value !== 'boolean') {
    problems.add('E_FIELD_SHAPE', `${path}.${key}`, 'must be true or false');
    return null;
  }
  return value;
}

/** A DNS-1123 label: what a wave name must be, since it becomes a label value. */
export function isDnsLabel(text: string): boolean {
  return /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(text);
}

/** A Kubernetes object name (DNS-1123 subdomain). */
export function isObjectName(text: string): boolean {
  return text.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(text);
}

/** A label value: at most 63 characters, alphanumeric at both ends. */
export function isLabelValue(text: string): boolean {
  return text === '' || /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(text);
}
