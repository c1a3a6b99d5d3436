// The x-kubernetes-validations half of CRD validation: every node's compiled CEL rules (crd.ts,
// cel.ts) run against the value there, and transition rules against the old value at the same
// place too, when an update has one (object fields correlate by name, map-list items by their
// keys). As in apiextensions, a schema error of the blocking kinds stops the rules and is
// reported with the "not checked" cause instead.

import type { CrdModel, CrdRule, Schema } from './crd.js';
import { deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { type Cause, checkValue, join, propertySchema } from './schema.js';

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTypeInvalid',
  'FieldValueTooLong',
  'FieldValueTooMany',
]);
const RULES_NOT_CHECKED =
  'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
const VERB: Readonly<Record<string, string>> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueForbidden: 'Forbidden',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
};

function ruleCause(entry: CrdRule, path: string): Cause {
  const relative = entry.fieldPath?.replace(/^\./, '');
  const at = relative === undefined ? path : join(path, relative);
  return {
    reason: entry.reason,
    message: `${VERB[entry.reason] ?? 'Invalid value'}: ${entry.message}`,
    field: at || '<nil>',
  };
}

/** The old item a map-list item correlates with: the one with the same values of the map keys. */
function correlatedItem(item: JsonValue, old: JsonValue | undefined, schema: Schema): JsonValue | undefined {
  if (schema['x-kubernetes-list-type'] !== 'map' || !Array.isArray(old) || !isJsonObject(item)) return undefined;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  return old.find((candidate) => isJsonObject(candidate) && keys.every((key) => deepEqual(candidate[key], item[key])));
}

function checkRules(
  value: JsonValue,
  old: JsonValue | undefined,
  schema: Schema,
  path: string,
  crd: CrdModel,
  causes: Cause[],
): void {
  for (const entry of crd.rules.get(schema) ?? []) {
    if (entry.rule.usesOldSelf && old === undefined) continue;
    if (!entry.rule.check(value, schema, entry.rule.usesOldSelf ? old : undefined)) causes.push(ruleCause(entry, path));
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    const items = schema.items;
    value.forEach((item, index) =>
      checkRules(item, correlatedItem(item, old, schema), items, `${path}[${index}]`, crd, causes),
    );
  } else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const childSchema = propertySchema(schema, key);
      const oldChild = isJsonObject(old) ? old[key] : undefined;
      if (childSchema !== null) checkRules(child, oldChild, childSchema, join(path, key), crd, causes);
    }
  }
}

/** What a root-level rule sees of an object: everything, but of metadata only the name and generateName. */
function ruleView(object: JsonObject): JsonObject {
  const { metadata, ...rest } = object;
  const view: JsonObject = { ...rest };
  if (isJsonObject(metadata)) {
    const visible: JsonObject = {};
    for (const key of ['name', 'generateName']) if (typeof metadata[key] === 'string') visible[key] = metadata[key];
    view['metadata'] = visible;
  }
  return view;
}

/**
 * Every problem with `object` (pruned and defaulted already) under the CRD's schema, in the
 * server's order: schema errors, then the rules — or, when a schema error blocks them, the "not
 * checked" cause. `old` is the stored object an update replaces, for the transition rules.
 */
export function validateObject(object: JsonObject, crd: CrdModel, old?: JsonObject): Cause[] {
  const causes: Cause[] = [];
  const { metadata: _metadata, ...rest } = object;
  checkValue(rest, crd.schema, '', causes);
  if (crd.rules.size === 0) return causes;
  if (causes.some((cause) => BLOCKING.has(cause.reason)))
    causes.push({ reason: 'FieldValueInvalid', message: RULES_NOT_CHECKED, field: '<nil>' });
  else checkRules(ruleView(object), old === undefined ? undefined : ruleView(old), crd.schema, '', crd, causes);
  return causes;
}
