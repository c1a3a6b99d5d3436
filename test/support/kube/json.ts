// JSON value types and the two JSON algorithms the fake needs: deep equality (to detect no-op
// writes, which a real API server does not persist) and RFC 7386 JSON merge patch.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a request body; undefined for anything that is not JSON (the caller answers 400). */
export function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

export function deepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * RFC 7386 MergePatch(target, patch): objects merge key by key, `null` deletes a key, anything
 * else (arrays included) replaces the target wholesale. Returns undefined when the result is "no
 * value" (patch `null` at the top), so a caller can drop the field. Never mutates its inputs.
 */
export function mergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue | undefined {
  if (!isJsonObject(patch)) return patch === null ? undefined : structuredClone(patch);
  const result: JsonObject = isJsonObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
      continue;
    }
    const merged = mergePatch(result[key], value);
    if (merged === undefined) delete result[key];
    else result[key] = merged;
  }
  return result;
}

/** Why a JSON Patch could not be applied (the server answers 422 for these). */
export class JsonPatchError extends Error {}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(document: JsonValue, tokens: readonly string[]): JsonValue {
  let current = document;
  for (const token of tokens.slice(0, -1)) {
    const next: JsonValue | undefined = Array.isArray(current)
      ? current[Number(token)]
      : isJsonObject(current)
        ? current[token]
        : undefined;
    if (next === undefined) throw new JsonPatchError(`no such path ${tokens.join('/')}`);
    current = next;
  }
  return current;
}

function read(document: JsonValue, path: string): JsonValue {
  const tokens = pointer(path);
  if (tokens.length === 0) return document;
  const parent = parentOf(document, tokens);
  const last = tokens.at(-1) ?? '';
  const value = Array.isArray(parent) ? parent[Number(last)] : isJsonObject(parent) ? parent[last] : undefined;
  if (value === undefined) throw new JsonPatchError(`no such path ${path}`);
  return value;
}

function write(document: JsonValue, path: string, value: JsonValue | undefined, insert: boolean): JsonValue {
  const tokens = pointer(path);
  if (tokens.length === 0) return value ?? null;
  const parent = parentOf(document, tokens);
  const last = tokens.at(-1) ?? '';
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length - (insert ? 0 : 1))
      throw new JsonPatchError(`index ${last} out of range`);
    if (value === undefined) parent.splice(index, 1);
    else parent.splice(index, insert ? 0 : 1, value);
  } else if (isJsonObject(parent)) {
    if (!insert && parent[last] === undefined) throw new JsonPatchError(`no such path ${path}`);
    if (value === undefined) delete parent[last];
    else parent[last] = value;
  } else throw new JsonPatchError(`no such path ${path}`);
  return document;
}

/** RFC 6902 JSON Patch: add, remove, replace, move, copy and test, applied to a copy of `target`. */
export function jsonPatch(target: JsonValue, operations: readonly JsonValue[]): JsonValue {
  let document = structuredClone(target);
  for (const operation of operations) {
    if (!isJsonObject(operation) || typeof operation['path'] !== 'string')
      throw new JsonPatchError('an operation needs an op and a path');
    const { op, path, from, value } = operation;
    if (op === 'add') document = write(document, path, structuredClone(value ?? null), true);
    else if (op === 'remove') document = write(document, path, undefined, false);
    else if (op === 'replace') document = write(document, path, structuredClone(value ?? null), false);
    else if (op === 'test') {
      if (!deepEqual(read(document, path), value)) throw new JsonPatchError(`test failed at ${path}`);
    } else if ((op === 'move' || op === 'copy') && typeof from === 'string') {
      const moved = structuredClone(read(document, from));
      if (op === 'move') document = write(document, from, undefined, false);
      document = write(document, path, moved, true);
    } else throw new JsonPatchError(`unknown op ${JSON.stringify(op)}`);
  }
  return document;
}
