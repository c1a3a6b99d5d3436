// The MachineOperation CRD as the fake serves it, read from the manifest operators apply
// (deploy/machineoperation-crd.yaml by default): its openAPIV3Schema drives validation and
// pruning, and its selectableFields the field selectors, so the fake cannot drift from the YAML.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAll } from 'js-yaml';
import { compileCel, type CelRule } from './cel.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { GROUP, KIND, PLURAL, VERSION } from './types.js';

export const SHIPPED_CRD = resolve(import.meta.dirname, '../../../deploy/machineoperation-crd.yaml');

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
  readonly nullable?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-validations'?: readonly { readonly rule: string; readonly message?: string }[];
}

export interface CrdRule {
  readonly rule: CelRule;
  readonly message: string;
}

export interface CrdModel {
  readonly schema: Schema;
  /** Field paths a field selector may name besides metadata.name, e.g. `spec.machineRef`. */
  readonly selectableFields: readonly string[];
  /** The compiled x-kubernetes-validations of each schema node. */
  readonly rules: ReadonlyMap<Schema, readonly CrdRule[]>;
}

const cache = new Map<string, CrdModel>();

/** Loads (once per path) and checks the CRD: it must define the resource types.ts names. */
export function loadCrd(path: string = SHIPPED_CRD): CrdModel {
  const cached = cache.get(path);
  if (cached !== undefined) return cached;
  const docs = loadAll(readFileSync(path, 'utf8')).filter(isJsonObject);
  const crd = docs.find((doc) => doc['kind'] === 'CustomResourceDefinition');
  const spec = crd?.['spec'];
  if (!isJsonObject(spec)) throw new Error(`${path} holds no CustomResourceDefinition`);
  const names = spec['names'];
  if (spec['group'] !== GROUP || !isJsonObject(names) || names['kind'] !== KIND || names['plural'] !== PLURAL)
    throw new Error(`${path} does not define ${PLURAL}.${GROUP} (${KIND}), which the fake serves`);
  const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isJsonObject) : [];
  const version = versions.find((v) => v['name'] === VERSION);
  const schema = isJsonObject(version?.['schema']) ? version['schema']['openAPIV3Schema'] : undefined;
  if (version === undefined || !isJsonObject(schema)) throw new Error(`${path} has no schema for ${VERSION}`);
  const selectable = Array.isArray(version['selectableFields']) ? version['selectableFields'] : [];
  const model: CrdModel = {
    schema: schema as Schema,
    selectableFields: selectable.filter(isJsonObject).map((field) => String(field['jsonPath']).replace(/^\./, '')),
    rules: compileRules(schema as Schema),
  };
  cache.set(path, model);
  return model;
}

function compileRules(root: Schema): Map<Schema, CrdRule[]> {
  const rules = new Map<Schema, CrdRule[]>();
  const walk = (schema: Schema): void => {
    const declared = schema['x-kubernetes-validations'] ?? [];
    if (declared.length > 0)
      rules.set(
        schema,
        declared.map((rule) => ({ rule: compileCel(rule.rule), message: rule.message ?? `failed rule: ${rule.rule}` })),
      );
    for (const child of Object.values(schema.properties ?? {})) walk(child);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties);
    if (schema.items !== undefined) walk(schema.items);
  };
  walk(root);
  return rules;
}

/** Reads a selectable field such as `spec.machineRef`; a missing field compares as "" (as the server does). */
export function selectableValue(object: JsonObject, field: string): string {
  let current: JsonValue | undefined = object;
  for (const key of field.split('.')) current = isJsonObject(current) ? current[key] : undefined;
  return typeof current === 'string' ? current : current === undefined || current === null ? '' : String(current);
}
