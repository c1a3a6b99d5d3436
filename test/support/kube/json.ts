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
