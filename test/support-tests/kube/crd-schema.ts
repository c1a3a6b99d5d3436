/**
 * The subset of CustomResourceDefinition validation the rollout CRDs use, so the shipped
 * examples and the planner's statuses are checked against the shipped schemas in the normal test
 * suite: defaults (applied first, as the API server does), types with int-or-string, required,
 * properties (unknown fields refused, as strict field validation does), additionalProperties,
 * enum, lengths, patterns, bounds, list sizes, map-list keys, date-time, and the CRDs' CEL rules,
 * each evaluated by a hand-written twin listed in a table (a rule without a twin is a problem,
 * so a new rule cannot go unchecked). Transition rules (those that read `oldSelf`) run only when
 * an old object is given.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Schema = { readonly [key: string]: Json };
/** A CEL rule's hand-written twin; `self` and `oldSelf` are untyped on purpose (`any`), as CEL reads them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Rule = (self: any, oldSelf?: any) => boolean;

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const isObject = (value: unknown): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A copy of `value` with the schema's defaults filled in where a field is absent. */
export function withDefaults(value: Json | undefined, schema: Schema): Json | undefined {
  if (Array.isArray(value) && isObject(schema['items'])) {
    return value.map((item) => withDefaults(item, schema['items'] as Schema) as Json);
  }
  if (!isObject(value) || !isObject(schema['properties'])) return value;
  const out: { [key: string]: Json } = { ...value };
  for (const [key, child] of Object.entries(schema['properties'] as { [key: string]: Schema })) {
    if (out[key] === undefined && child['default'] !== undefined) out[key] = structuredClone(child['default']);
    if (out[key] !== undefined) out[key] = withDefaults(out[key], child) as Json;
  }
  return out;
}

export function validate(
  value: Json | undefined,
  schema: Schema,
  rules: ReadonlyMap<string, Rule>,
  old?: Json,
  path = '',
): string[] {
  const at = path === '' ? '.' : path;
  if (value === undefined || value === null) return [`${at}: missing`];
  const typeProblem = checkType(value, schema);
  if (typeProblem !== null) return [`${at}: ${typeProblem}`];
  const problems = [...checkValue(value, schema).map((problem) => `${at}: ${problem}`)];
  if (Array.isArray(value) && isObject(schema['items'])) {
    const oldItems = Array.isArray(old) ? old : [];
    value.forEach((item, index) =>
      problems.push(...validate(item, schema['items'] as Schema, rules, oldItems[index], `${path}[${index}]`)),
    );
  }
  if (isObject(value)) problems.push(...checkObject(value, schema, rules, isObject(old) ? old : undefined, path));
  for (const { rule, message } of (schema['x-kubernetes-validations'] as
    { rule: string; message: string }[] | undefined) ?? []) {
    const twin = rules.get(rule);
    if (twin === undefined) problems.push(`${at}: no twin for the CEL rule ${rule}`);
    else if (rule.includes('oldSelf') && old === undefined) continue;
    else if (!twin(value, old)) problems.push(`${at}: ${message}`);
  }
  return problems;
}

function checkType(value: Json, schema: Schema): string | null {
  if (schema['x-kubernetes-int-or-string'] === true) {
    return Number.isInteger(value) || typeof value === 'string' ? null : 'not an integer or a string';
  }
  switch (schema['type']) {
    case 'object':
      return isObject(value) ? null : 'not an object';
    case 'array':
      return Array.isArray(value) ? null : 'not an array';
    case 'string':
      return typeof value === 'string' ? null : 'not a string';
    case 'integer':
      return Number.isInteger(value) ? null : 'not an integer';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'not a boolean';
    default:
      return null;
  }
}

function checkValue(value: Json, schema: Schema): string[] {
  const problems: string[] = [];
  const {
    enum: options,
    minLength,
    maxLength,
    pattern,
    minimum,
    maximum,
    minItems,
    maxItems,
    maxProperties,
    format,
  } = schema;
  if (Array.isArray(options) && !options.includes(value))
    problems.push(`${JSON.stringify(value)} is not one of ${options.join(', ')}`);
  if (typeof value === 'string') {
    if (typeof minLength === 'number' && [...value].length < minLength) problems.push(`shorter than ${minLength}`);
    if (typeof maxLength === 'number' && [...value].length > maxLength) problems.push(`longer than ${maxLength}`);
    if (typeof pattern === 'string' && !new RegExp(pattern).test(value)) problems.push(`does not match ${pattern}`);
    if (format === 'date-time' && !DATE_TIME.test(value)) problems.push('not a date-time');
  }
  if (typeof value === 'number') {
    if (typeof minimum === 'number' && value < minimum) problems.push(`below ${minimum}`);
    if (typeof maximum === 'number' && value > maximum) problems.push(`above ${maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof minItems === 'number' && value.length < minItems) problems.push(`fewer than ${minItems} items`);
    if (typeof maxItems === 'number' && value.length > maxItems) problems.push(`more than ${maxItems} items`);
    const keys = schema['x-kubernetes-list-map-keys'];
    if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(keys)) {
      const seen = value.map((item) =>
        JSON.stringify(keys.map((key) => (isObject(item) ? item[key as string] : null))),
      );
      if (new Set(seen).size !== seen.length) problems.push(`duplicate ${keys.join(', ')}`);
    }
  }
  if (isObject(value) && typeof maxProperties === 'number' && Object.keys(value).length > maxProperties) {
    problems.push(`more than ${maxProperties} properties`);
  }
  return problems;
}

function checkObject(
  value: { [key: string]: Json },
  schema: Schema,
  rules: ReadonlyMap<string, Rule>,
  old: { [key: string]: Json } | undefined,
  path: string,
): string[] {
  const problems: string[] = [];
  const properties = schema['properties'] as { [key: string]: Schema } | undefined;
  const additional = schema['additionalProperties'] as Schema | undefined;
  for (const key of (schema['required'] as string[] | undefined) ?? []) {
    if (!(key in value)) problems.push(`${path}.${key}: required`);
  }
  for (const [key, child] of Object.entries(value)) {
    const childSchema = properties?.[key] ?? additional;
    if (childSchema !== undefined) problems.push(...validate(child, childSchema, rules, old?.[key], `${path}.${key}`));
    else if (properties !== undefined) problems.push(`${path}.${key}: unknown field`);
  }
  return problems;
}
