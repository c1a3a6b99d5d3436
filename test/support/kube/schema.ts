// Structural-schema pruning and validation as kube-apiserver applies a CRD's openAPIV3Schema: unknown
// fields are dropped with a warning, then types, enums, formats, lengths, bounds, required fields,
// list-map keys and the x-kubernetes-validations rules are checked. The causes carry the reasons
// and field paths the real server reports (k8s.io/apimachinery field.ErrorType), so a client
// sees the same 422 from both.

import type { CrdModel, Schema } from './crd.js';
import { deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json.js';

export interface Cause extends JsonObject {
  reason: string;
  message: string;
  field: string;
}

/** A schema error of one of these kinds stops the CEL rules from running, as apiextensions does. */
const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTypeInvalid']);
const RULES_NOT_CHECKED =
  'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

const quote = (value: JsonValue): string => JSON.stringify(value);
const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** Drops what the schema does not declare (and nulls it does not allow); `pruned` collects the paths. */
export function prune(value: JsonValue, schema: Schema, path: string, pruned: string[]): JsonValue {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return value;
  if (Array.isArray(value)) {
    const items = schema.items;
    return items === undefined ? value : value.map((item, index) => prune(item, items, `${path}[${index}]`, pruned));
  }
  if (!isJsonObject(value) || (schema.type !== undefined && schema.type !== 'object')) return value;
  const result: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const childSchema =
      schema.properties?.[key] ??
      (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : null);
    if (childSchema === null) {
      pruned.push(join(path, key));
      continue;
    }
    if (child === null && childSchema.nullable !== true) continue;
    result[key] = prune(child, childSchema, join(path, key), pruned);
  }
  return result;
}

function jsonType(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(value: JsonValue, type: string | undefined): boolean {
  if (type === undefined) return true;
  const actual = jsonType(value);
  return actual === type || (type === 'number' && actual === 'integer') || (type === 'object' && isJsonObject(value));
}

/** RFC 3339 as strfmt's date-time reads it: `T`/`t`, fractional seconds, `Z`/`z` or ±hh:mm. */
export function isDateTime(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(text);
  if (match === null) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  const days = new Date(Date.UTC(year ?? 0, month ?? 0, 0)).getUTCDate();
  const offsetOk = match[9] === undefined || (Number(match[9]) < 24 && Number(match[10]) < 60);
  return (
    (month ?? 0) >= 1 &&
    (month ?? 0) <= 12 &&
    (day ?? 0) >= 1 &&
    (day ?? 0) <= days &&
    (hour ?? 0) < 24 &&
    (minute ?? 0) < 60 &&
    (second ?? 0) < 60 &&
    offsetOk
  );
}

function checkScalar(value: JsonValue, schema: Schema, path: string, causes: Cause[]): void {
  const invalid = (message: string): number => causes.push({ reason: 'FieldValueInvalid', message, field: path });
  if (schema.enum !== undefined && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
    const supported = schema.enum.map(quote).join(', ');
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${quote(value)}: supported values: ${supported}`,
      field: path,
    });
  }
  if (typeof value === 'string') {
    if (schema.format === 'date-time' && !isDateTime(value))
      causes.push({
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: ${quote(value)}: ${path} in body must be of type date-time: ${quote(value)}`,
        field: path,
      });
    if (schema.minLength !== undefined && value.length < schema.minLength)
      invalid(`Invalid value: ${quote(value)}: ${path} in body should be at least ${schema.minLength} chars long`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      invalid(`Invalid value: ${quote(value)}: ${path} in body should be at most ${schema.maxLength} chars long`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      invalid(`Invalid value: ${value}: ${path} in body should be greater than or equal to ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      invalid(`Invalid value: ${value}: ${path} in body should be less than or equal to ${schema.maximum}`);
    if (schema.format === 'int32' && (value < INT32.min || value > INT32.max))
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "": Checked value must be of type integer with format int32 in ${path}`,
        field: '<nil>',
      });
  }
}

function checkObject(value: JsonObject, schema: Schema, path: string, causes: Cause[]): void {
  for (const key of schema.required ?? [])
    if (value[key] === undefined)
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, key) });
  for (const [key, child] of Object.entries(value)) {
    const childSchema =
      schema.properties?.[key] ??
      (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : null);
    if (childSchema !== null) checkValue(child, childSchema, join(path, key), causes);
  }
}

function checkListMap(value: JsonValue[], schema: Schema, path: string, causes: Cause[]): void {
  if (schema['x-kubernetes-list-type'] !== 'map') return;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen: JsonObject[] = [];
  value.forEach((item, index) => {
    if (!isJsonObject(item)) return;
    const key: JsonObject = {};
    for (const name of keys) if (item[name] !== undefined) key[name] = item[name];
    if (seen.some((earlier) => deepEqual(earlier, key)))
      causes.push({
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${quote(key)}`,
        field: `${path}[${index}]`,
      });
    seen.push(key);
  });
}

function checkValue(value: JsonValue, schema: Schema, path: string, causes: Cause[]): void {
  if (!typeMatches(value, schema.type)) {
    const expected =
      schema.type === 'integer' && jsonType(value) === 'number' ? (schema.format ?? 'integer') : schema.type;
    const actual = jsonType(value) === 'number' ? 'float64' : jsonType(value);
    causes.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: ${quote(actual)}: ${path} in body must be of type ${String(expected)}: ${quote(actual)}`,
      field: path,
    });
    return;
  }
  checkScalar(value, schema, path, causes);
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items !== undefined) value.forEach((item, index) => checkValue(item, items, `${path}[${index}]`, causes));
    checkListMap(value, schema, path, causes);
  } else if (isJsonObject(value)) checkObject(value, schema, path, causes);
}

function checkRules(value: JsonValue, schema: Schema, path: string, crd: CrdModel, causes: Cause[]): void {
  for (const { rule, message } of crd.rules.get(schema) ?? [])
    if (!rule(value)) causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${message}`, field: path });
  if (Array.isArray(value) && schema.items !== undefined) {
    const items = schema.items;
    value.forEach((item, index) => checkRules(item, items, `${path}[${index}]`, crd, causes));
  } else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const childSchema =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : null);
      if (childSchema !== null) checkRules(child, childSchema, join(path, key), crd, causes);
    }
  }
}

/**
 * Every problem with `object` (pruned already) under the CRD's schema, in the server's order:
 * schema errors, then the rules — or, when a schema error blocks them, the "not checked" cause.
 */
export function validateObject(object: JsonObject, crd: CrdModel): Cause[] {
  const causes: Cause[] = [];
  const { metadata: _metadata, ...rest } = object;
  checkValue(rest, crd.schema, '', causes);
  if (crd.rules.size === 0) return causes;
  if (causes.some((cause) => BLOCKING.has(cause.reason)))
    causes.push({ reason: 'FieldValueInvalid', message: RULES_NOT_CHECKED, field: '<nil>' });
  else checkRules(rest, crd.schema, '', crd, causes);
  return causes;
}
