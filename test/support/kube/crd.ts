// The custom resources as the fake serves them, read from the CRD manifests operators apply
// (deploy/machineoperation-crd.yaml, deploy/agentrelease-crd.yaml, deploy/agentrollout-crd.yaml):
// the names, the scope, the openAPIV3Schema that drives validation, defaulting and pruning, the
// x-kubernetes-validations rules and the selectableFields, so the fake cannot drift from the
// YAML. A CRD that uses a schema keyword, format or CEL rule the fake does not implement is
// refused when it is loaded, naming what is missing, rather than served with that part skipped.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAll } from 'js-yaml';
import { compileCel, type CelRule } from './cel.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';

const DEPLOY = resolve(import.meta.dirname, '../../../deploy');
export const SHIPPED_CRD = resolve(DEPLOY, 'machineoperation-crd.yaml');
export const RELEASE_CRD = resolve(DEPLOY, 'agentrelease-crd.yaml');
export const ROLLOUT_CRD = resolve(DEPLOY, 'agentrollout-crd.yaml');

/** One node of a structural schema, as far as the fake reads it. */
export interface Schema {
  readonly type?: string;
  readonly format?: string;
  readonly enum?: readonly JsonValue[];
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly pattern?: string;
  readonly nullable?: boolean;
  readonly default?: JsonValue;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-validations'?: readonly JsonObject[];
}

export interface CrdRule {
  readonly rule: CelRule;
  readonly message: string;
  /** The cause reason a failure reports (the rule's `reason`, FieldValueInvalid by default). */
  readonly reason: string;
  /** A `fieldPath` the failure is reported at, relative to the rule's node (e.g. `.spec.x`). */
  readonly fieldPath: string | undefined;
}

/** What a test expects a CRD file to define. */
export interface CrdIdentity {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
}

export interface CrdModel extends CrdIdentity {
  readonly listKind: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
  readonly schema: Schema;
  /** Field paths a field selector may name besides metadata.name, e.g. `spec.machineRef`. */
  readonly selectableFields: readonly string[];
  /** The compiled x-kubernetes-validations of each schema node. */
  readonly rules: ReadonlyMap<Schema, readonly CrdRule[]>;
}

export const MACHINE_OPERATION: CrdIdentity = {
  group: 'unbounded-cloud.io',
  version: 'v1alpha3',
  kind: 'MachineOperation',
  plural: 'machineoperations',
};
export const AGENT_RELEASE: CrdIdentity = {
  group: 'agent-upgrade.dev',
  version: 'v1alpha1',
  kind: 'AgentRelease',
  plural: 'agentreleases',
};
export const AGENT_ROLLOUT: CrdIdentity = { ...AGENT_RELEASE, kind: 'AgentRollout', plural: 'agentrollouts' };

const KEYWORDS = new Set([
  'type',
  'format',
  'enum',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'pattern',
  'nullable',
  'default',
  'description',
  'title',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
]);
const FORMATS = new Set(['date-time', 'int32', 'int64']);
const RULE_FIELDS = new Set(['rule', 'message', 'reason', 'fieldPath']);
const REASONS = new Set(['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']);

const cache = new Map<string, CrdModel>();

/** Loads (once per path) and checks the CRD: it must define `expected`, with a status subresource. */
export function loadCrd(path: string = SHIPPED_CRD, expected: CrdIdentity = MACHINE_OPERATION): CrdModel {
  const cached = cache.get(path);
  if (cached !== undefined && cached.plural === expected.plural) return cached;
  const docs = loadAll(readFileSync(path, 'utf8')).filter(isJsonObject);
  const spec = docs.find((doc) => doc['kind'] === 'CustomResourceDefinition')?.['spec'];
  if (!isJsonObject(spec)) throw new Error(`${path} holds no CustomResourceDefinition`);
  const names = isJsonObject(spec['names']) ? spec['names'] : {};
  const { plural, kind, group } = expected;
  if (spec['group'] !== group || names['kind'] !== kind || names['plural'] !== plural)
    throw new Error(`${path} does not define ${plural}.${group} (${kind}), which the fake serves`);
  const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isJsonObject) : [];
  const version = versions.find((v) => v['name'] === expected.version);
  const schema = isJsonObject(version?.['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
  if (version === undefined || !isJsonObject(schema)) throw new Error(`${path} has no schema for ${expected.version}`);
  if (!isJsonObject(version['subresources']) || !isJsonObject(version['subresources']['status']))
    throw new Error(`${path}: the fake serves custom resources with a status subresource only`);
  if (spec['scope'] !== 'Cluster') throw new Error(`${path}: the fake serves cluster-scoped custom resources only`);
  checkSchema(path, schema as Schema, '');
  const selectable = Array.isArray(version['selectableFields']) ? version['selectableFields'] : [];
  const model: CrdModel = {
    ...expected,
    listKind: typeof names['listKind'] === 'string' ? names['listKind'] : `${kind}List`,
    singular: typeof names['singular'] === 'string' ? names['singular'] : kind.toLowerCase(),
    shortNames: Array.isArray(names['shortNames']) ? names['shortNames'].map(String) : [],
    namespaced: false,
    schema: schema as Schema,
    selectableFields: selectable.filter(isJsonObject).map((field) => String(field['jsonPath']).replace(/^\./, '')),
    rules: compileRules(schema as Schema),
  };
  cache.set(path, model);
  return model;
}

/** Refuses a schema that uses what the fake does not implement, naming the first such place. */
function checkSchema(path: string, schema: Schema, at: string): void {
  const unknown = Object.keys(schema).filter((key) => !KEYWORDS.has(key));
  if (unknown.length > 0)
    throw new Error(`${path}: the fake does not implement ${unknown.join(', ')} (at ${at || '/'})`);
  if (schema.format !== undefined && !FORMATS.has(schema.format))
    throw new Error(`${path}: the fake does not implement the format ${schema.format} (at ${at || '/'})`);
  for (const [key, child] of Object.entries(schema.properties ?? {})) checkSchema(path, child, `${at}.${key}`);
  if (typeof schema.additionalProperties === 'object') checkSchema(path, schema.additionalProperties, `${at}.*`);
  if (schema.items !== undefined) checkSchema(path, schema.items, `${at}[*]`);
}

function compileRule(declared: JsonObject): CrdRule {
  const source = declared['rule'];
  if (typeof source !== 'string') throw new Error(`an x-kubernetes-validations entry without a rule`);
  const unknown = Object.keys(declared).filter((key) => !RULE_FIELDS.has(key));
  if (unknown.length > 0)
    throw new Error(`the fake does not implement ${unknown.join(', ')} of the CRD rule ${JSON.stringify(source)}`);
  const reason = declared['reason'] ?? 'FieldValueInvalid';
  if (typeof reason !== 'string' || !REASONS.has(reason))
    throw new Error(`the CRD rule ${JSON.stringify(source)} has an unknown reason ${String(reason)}`);
  const fieldPath = declared['fieldPath'];
  const message = declared['message'];
  return {
    rule: compileCel(source),
    message: typeof message === 'string' ? message : `failed rule: ${source}`,
    reason,
    fieldPath: typeof fieldPath === 'string' ? fieldPath : undefined,
  };
}

/**
 * Compiles every node's rules. A transition rule (one that reads `oldSelf`) below a list the fake
 * cannot correlate with the old object (anything but x-kubernetes-list-type: map) is refused: the
 * API server would evaluate it, the fake could not.
 */
function compileRules(root: Schema): Map<Schema, CrdRule[]> {
  const rules = new Map<Schema, CrdRule[]>();
  const walk = (schema: Schema, correlatable: boolean): void => {
    const compiled = (schema['x-kubernetes-validations'] ?? []).map(compileRule);
    const transition = compiled.find((entry) => entry.rule.usesOldSelf);
    if (transition !== undefined && !correlatable)
      throw new Error(`the fake cannot correlate the transition rule ${JSON.stringify(transition.rule.source)}`);
    if (compiled.length > 0) rules.set(schema, compiled);
    for (const child of Object.values(schema.properties ?? {})) walk(child, correlatable);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, correlatable);
    if (schema.items !== undefined) walk(schema.items, correlatable && schema['x-kubernetes-list-type'] === 'map');
  };
  walk(root, true);
  return rules;
}

/** Reads a selectable field such as `spec.machineRef`; a missing field compares as "" (as the server does). */
export function selectableValue(object: JsonObject, field: string): string {
  let current: JsonValue | undefined = object;
  for (const key of field.split('.')) current = isJsonObject(current) ? current[key] : undefined;
  return typeof current === 'string' ? current : current === undefined || current === null ? '' : String(current);
}
