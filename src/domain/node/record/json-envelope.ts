import type { ErrorCode } from '../../common/error-codes.js';
import { fail, ok, type Result } from '../../common/failure.js';

/**
 * The strict envelope every durable JSON document of the upgrader shares (the upgrade record,
 * the state file, the activation marker): bounded size, valid JSON, a plain object of the
 * expected kind and schema version, and exactly the expected own keys. Unknown kinds, versions
 * or keys are errors with the document's code, never guessed at.
 */
export interface EnvelopeSpec {
  /** The document as named in messages ("the upgrade record"). */
  readonly what: string;
  /** The key path prefix in messages ("record"). */
  readonly where: string;
  readonly code: ErrorCode;
  readonly kind: string;
  readonly schemaVersion: number;
  /** Characters, not bytes: a valid document is pure ASCII, so the two differ only for text refused anyway. */
  readonly maxLength: number;
  readonly keys: readonly string[];
  /** Keys a document may leave out: added later, written only when they say something. */
  readonly optionalKeys?: readonly string[];
}

export function parseEnvelope(text: string, spec: EnvelopeSpec): Result<Record<string, unknown>> {
  if (text.length > spec.maxLength) return fail(spec.code, `${spec.what} is larger than ${spec.maxLength} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail(spec.code, `${spec.what} is not valid JSON`);
  }
  if (!isPlainObject(value)) return fail(spec.code, `${spec.what} is not a JSON object`);
  if (value.kind !== spec.kind) return fail(spec.code, `${spec.what} has an unknown kind (expected ${spec.kind})`);
  if (value.schemaVersion !== spec.schemaVersion)
    return fail(spec.code, `${spec.what} has an unsupported schema version (expected ${spec.schemaVersion})`);
  const problem = checkExactKeys(value, spec.keys, spec.where, spec.optionalKeys);
  return problem === null ? ok(value) : fail(spec.code, problem);
}

/** Every required key present as an own key, and nothing but those and the optional ones; the problem, or null. */
export function checkExactKeys(
  value: Record<string, unknown>,
  required: readonly string[],
  where: string,
  optional: readonly string[] = [],
): string | null {
  for (const key of required) {
    if (!Object.hasOwn(value, key)) return `${where}.${key} is missing`;
  }
  for (const key of Object.keys(value)) {
    if (!required.includes(key) && !optional.includes(key)) return `${where} has an unknown key "${key}"`;
  }
  return null;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
