// Structural-schema pruning, defaulting and validation as kube-apiserver applies a CRD's
// openAPIV3Schema: unknown fields are dropped with a warning, defaults fill absent fields, then
// types (int-or-string included), enums, formats, lengths, patterns, bounds, item and property
// counts, required fields, list-map and set keys are checked, then the x-kubernetes-validations
// rules (schema-rules.ts). The causes carry the reasons and field paths the real server reports
// (k8s.io/apimachinery field.ErrorType), so a client sees the same 422 from both.
//
// Not modelled: validation ratcheting (an update may keep an invalid value it does not change).
// Every object the fake stores passed this validation under the same CRD, so the difference
// cannot show.

import type { Schema } from './crd.js';
import { deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json.js';

export { validateObject } from './schema-rules.js';

export interface Cause extends JsonObject {
  reason: string;
  message: string;
  field: string;
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

const quote = (value: JsonValue): string => JSON.stringify(value);
export const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** The schema of `key` inside an object of schema `schema`, or null when it declares none. */
export function propertySchema(schema: Schema, key: string): Schema | null {
  return (
    schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : null)
  );
}

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
    const childSchema = propertySchema(schema, key);
    if (childSchema === null) {
      pruned.push(join(path, key));
      continue;
    }
    if (child === null && childSchema.nullable !== true) continue;
    result[key] = prune(child, childSchema, join(path, key), pruned);
  }
  return result;
}

/** Fills absent fields that declare a `default`, at every depth, as the server defaults a decoded body. */
export function applyDefaults(value: JsonValue, schema: Schema): JsonValue {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items === undefined ? value : value.map((item) => applyDefaults(item, items));
  }
  if (!isJsonObject(value)) return value;
  const result: JsonObject = { ...value };
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    if (result[key] === undefined && child.default !== undefined) result[key] = structuredClone(child.default);
  for (const [key, child] of Object.entries(result)) {
    const childSchema = propertySchema(schema, key);
    if (childSchema !== null) result[key] = applyDefaults(child, childSchema);
  }
  return result;
}

function jsonType(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(value: JsonValue, schema: Schema): boolean {
  const actual = jsonType(value);
  if (schema['x-kubernetes-int-or-string'] === true) return actual === 'integer' || actual === 'string';
  const { type } = schema;
  if (type === undefined) return true;
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

const patterns = new Map<string, RegExp>();
function matchesPattern(text: string, pattern: string): boolean {
  let compiled = patterns.get(pattern);
  if (compiled === undefined) {
    compiled = new RegExp(pattern, 'u');
    patterns.set(pattern, compiled);
  }
  return compiled.test(text);
}

function checkString(value: string, schema: Schema, path: string, causes: Cause[]): void {
  const invalid = (message: string): number => causes.push({ reason: 'FieldValueInvalid', message, field: path });
  if (schema.format === 'date-time' && !isDateTime(value))
    causes.push({
      reason: 'FieldValueTypeInvalid',
      message: `Invalid value: ${quote(value)}: ${path} in body must be of type date-time: ${quote(value)}`,
      field: path,
    });
  // The limits count characters (code points), as kube-openapi does, though the message says bytes.
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength)
    invalid(`Invalid value: ${quote(value)}: ${path} in body should be at least ${schema.minLength} chars long`);
  if (schema.maxLength !== undefined && length > schema.maxLength)
    causes.push({
      reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${schema.maxLength} bytes`,
      field: path,
    });
  if (schema.pattern !== undefined && !matchesPattern(value, schema.pattern))
    invalid(`Invalid value: ${quote(value)}: ${path} in body should match '${schema.pattern}'`);
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
  if (typeof value === 'string') checkString(value, schema, path, causes);
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

function checkCount(count: number, schema: Schema, kind: 'items' | 'properties', path: string, causes: Cause[]): void {
  const [min, max] =
    kind === 'items' ? [schema.minItems, schema.maxItems] : [schema.minProperties, schema.maxProperties];
  if (min !== undefined && count < min)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${count}: ${path} in body should have at least ${min} ${kind}`,
      field: path,
    });
  if (max !== undefined && count > max)
    causes.push({
      reason: 'FieldValueTooMany',
      message: `Too many: ${count}: must have at most ${max} items`,
      field: path,
    });
}

function checkObject(value: JsonObject, schema: Schema, path: string, causes: Cause[]): void {
  for (const key of schema.required ?? [])
    if (value[key] === undefined)
      causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, key) });
  checkCount(Object.keys(value).length, schema, 'properties', path, causes);
  for (const [key, child] of Object.entries(value)) {
    const childSchema = propertySchema(schema, key);
    if (childSchema !== null) checkValue(child, childSchema, join(path, key), causes);
  }
}

/** Map lists must not repeat a key, sets a value. */
function checkListKeys(value: JsonValue[], schema: Schema, path: string, causes: Cause[]): void {
  const listType = schema['x-kubernetes-list-type'];
  if (listType !== 'map' && listType !== 'set') return;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen: JsonValue[] = [];
  value.forEach((item, index) => {
    let key: JsonValue = item;
    if (listType === 'map') {
      if (!isJsonObject(item)) return;
      const entries: JsonObject = {};
      for (const name of keys) if (item[name] !== undefined) entries[name] = item[name];
      key = entries;
    }
    if (seen.some((earlier) => deepEqual(earlier, key)))
      causes.push({
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${quote(key)}`,
        field: `${path}[${index}]`,
      });
    seen.push(key);
  });
}

export function checkValue(value: JsonValue, schema: Schema, path: string, causes: Cause[]): void {
  if (!typeMatches(value, schema)) {
    const declared = schema['x-kubernetes-int-or-string'] === true ? 'integer,string' : schema.type;
    const expected =
      schema.type === 'integer' && jsonType(value) === 'number' ? (schema.format ?? 'integer') : declared;
    const actual = jsonType(value) === 'number' && schema.type !== undefined ? 'float64' : jsonType(value);
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
    checkCount(value.length, schema, 'items', path, causes);
    if (items !== undefined) value.forEach((item, index) => checkValue(item, items, `${path}[${index}]`, causes));
    checkListKeys(value, schema, path, causes);
  } else if (isJsonObject(value)) checkObject(value, schema, path, causes);
}
