// CEL values as the fake's evaluator (cel.ts) holds them: JSON read through the schema of the
// node it sits at, as the API server types a custom resource for CEL. Integers are bigints and
// doubles numbers, so `type(self) == int` and integer arithmetic are exact; a list knows whether
// its schema makes it a set or a map list, whose equality ignores order; a missing field is an
// error, never undefined. Errors are thrown as CelError and caught where CEL absorbs them.

import type { Schema } from './crd.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';

/** A CEL runtime error ("no such key", "no such overload", …): the rule then fails. */
export class CelError extends Error {}

export class CelType {
  constructor(readonly name: string) {}
}

export class CelUint {
  constructor(readonly value: bigint) {}
}

export class CelList {
  constructor(
    readonly items: readonly CelValue[],
    /** x-kubernetes-list-type set or map: equality ignores order. */
    readonly unordered: boolean,
  ) {}
}

export class CelMap {
  constructor(
    private readonly object: JsonObject,
    private readonly schema: Schema | undefined,
  ) {}

  keys(): string[] {
    return Object.keys(this.object);
  }

  has(key: string): boolean {
    return Object.hasOwn(this.object, key);
  }

  get(key: string): CelValue {
    if (!this.has(key)) throw new CelError(`no such key: ${key}`);
    return fromJson(this.object[key] ?? null, childSchema(this.schema, key));
  }
}

export type CelValue = null | boolean | bigint | number | string | CelUint | CelList | CelMap | CelType;

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

function childSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (schema === undefined) return undefined;
  return (
    schema.properties?.[key] ??
    (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
  );
}

/** `value` as CEL sees a field of type `schema` (integers exact, number fields double). */
export function fromJson(value: JsonValue, schema: Schema | undefined): CelValue {
  if (typeof value === 'number') {
    if (schema?.type === 'number' || !Number.isInteger(value)) return value;
    return BigInt(value);
  }
  if (Array.isArray(value)) {
    const listType = schema?.['x-kubernetes-list-type'];
    return new CelList(
      value.map((item) => fromJson(item, schema?.items)),
      listType === 'set' || listType === 'map',
    );
  }
  if (isJsonObject(value)) return new CelMap(value, schema);
  return value;
}

export function int(value: bigint): bigint {
  if (value < INT64.min || value > INT64.max) throw new CelError('integer overflow');
  return value;
}

export function typeName(value: CelValue): string {
  if (value === null) return 'null_type';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return 'double';
  if (typeof value === 'string') return 'string';
  if (value instanceof CelUint) return 'uint';
  if (value instanceof CelList) return 'list';
  if (value instanceof CelMap) return 'map';
  return 'type';
}

function numeric(value: CelValue): number | bigint | undefined {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  if (value instanceof CelUint) return value.value;
  return undefined;
}

function unorderedEqual(a: CelList, b: CelList): boolean {
  const unmatched = [...b.items];
  for (const item of a.items) {
    const at = unmatched.findIndex((other) => celEquals(item, other));
    if (at < 0) return false;
    unmatched.splice(at, 1);
  }
  return true;
}

/** CEL `==` with heterogeneous equality: values of different types are unequal, numbers compare by value. */
export function celEquals(a: CelValue, b: CelValue): boolean {
  const [x, y] = [numeric(a), numeric(b)];
  if (x !== undefined && y !== undefined) return x == y; // loose equality compares a bigint with a number by value
  if (a instanceof CelList && b instanceof CelList) {
    if (a.items.length !== b.items.length) return false;
    if (a.unordered || b.unordered) return unorderedEqual(a, b);
    return a.items.every((item, index) => celEquals(item, b.items[index] ?? null));
  }
  if (a instanceof CelMap && b instanceof CelMap) {
    const keys = a.keys();
    return keys.length === b.keys().length && keys.every((key) => b.has(key) && celEquals(a.get(key), b.get(key)));
  }
  if (a instanceof CelType && b instanceof CelType) return a.name === b.name;
  return a === b;
}

/** CEL ordering: numbers (across int, uint and double), strings, bools; anything else is an error. */
export function celCompare(a: CelValue, b: CelValue): number {
  const [x, y] = [numeric(a), numeric(b)];
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  if ((typeof a === 'string' && typeof b === 'string') || (typeof a === 'boolean' && typeof b === 'boolean'))
    return a < b ? -1 : a > b ? 1 : 0;
  throw new CelError(`no such overload: ${typeName(a)} < ${typeName(b)}`);
}

export function celSize(value: CelValue): bigint {
  if (typeof value === 'string') return BigInt([...value].length);
  if (value instanceof CelList) return BigInt(value.items.length);
  if (value instanceof CelMap) return BigInt(value.keys().length);
  throw new CelError(`no such overload: size(${typeName(value)})`);
}

export function requireBool(value: CelValue): boolean {
  if (typeof value !== 'boolean') throw new CelError(`no such overload: expected bool, got ${typeName(value)}`);
  return value;
}

export function requireString(value: CelValue): string {
  if (typeof value !== 'string') throw new CelError(`no such overload: expected string, got ${typeName(value)}`);
  return value;
}
