// Turning a request body into a MachineOperation as kube-apiserver decodes a custom resource:
// unknown ObjectMeta fields and fields the CRD's schema does not declare are pruned (each one a
// `299` warning), then the name and the object are validated; anything wrong is the 422 Status.

import type { CrdModel } from './crd.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { prune, validateObject, type Cause } from './schema.js';
import { fail, invalid } from './status.js';
import { API_VERSION, KIND, type MachineOperation, type MachineOperationInput } from './types.js';

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export interface Decoded {
  readonly object: JsonObject;
  readonly metadata: JsonObject;
  /** Warning texts (`unknown field "spec.x"`): ObjectMeta's first, then the schema's, sorted, as the server lists them. */
  readonly warnings: readonly string[];
}

function stringMap(value: JsonValue | undefined, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw fail(400, `${field} must be a map of strings`, 'BadRequest');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function stringList(value: JsonValue | undefined, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw fail(400, `${field} must be a list of strings`, 'BadRequest');
  return value.map(String);
}

/** Prunes `body` as the server decodes it; `metadata` keeps only ObjectMeta's fields. */
export function decode(body: JsonObject, crd: CrdModel): Decoded {
  const { metadata: rawMetadata, ...rest } = body;
  if (rawMetadata !== undefined && rawMetadata !== null && !isJsonObject(rawMetadata))
    throw fail(400, 'metadata must be an object', 'BadRequest');
  const metadata: JsonObject = {};
  const unknownMeta: string[] = [];
  for (const [key, value] of Object.entries(rawMetadata ?? {})) {
    if (OBJECT_META_FIELDS.has(key)) metadata[key] = value;
    else unknownMeta.push(`metadata.${key}`);
  }
  stringMap(metadata['labels'], 'metadata.labels');
  stringMap(metadata['annotations'], 'metadata.annotations');
  stringList(metadata['finalizers'], 'metadata.finalizers');
  const pruned: string[] = [];
  const object = prune(rest, crd.schema, '', pruned) as JsonObject;
  const warnings = [...unknownMeta.sort(), ...pruned.sort()].map((field) => `unknown field "${field}"`);
  return { object, metadata, warnings };
}

function nameCauses(name: string): Cause[] {
  if (name.length > 253)
    return [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(name)}: must be no more than 253 characters`,
        field: 'metadata.name',
      },
    ];
  if (!SUBDOMAIN.test(name))
    return [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(name)}: ${SUBDOMAIN_MESSAGE}`,
        field: 'metadata.name',
      },
    ];
  return [];
}

/** The 422 for everything wrong with `op`, or nothing. */
export function requireValid(op: MachineOperation, crd: CrdModel): void {
  const causes = [...nameCauses(op.metadata.name), ...validateObject(asJson(op), crd)];
  if (causes.length > 0) throw invalid(op.metadata.name, causes);
}

/** A create input from a decoded body: name (or generateName), labels, annotations, finalizers, spec, status. */
export function createInput(decoded: Decoded): MachineOperationInput {
  const { metadata, object } = decoded;
  let name = metadata['name'];
  const generateName = metadata['generateName'];
  if ((typeof name !== 'string' || name === '') && typeof generateName === 'string' && generateName !== '')
    name = generateName + Math.random().toString(36).slice(2, 7);
  if (typeof name !== 'string' || name === '')
    throw fail(422, 'metadata.name: Required value: name or generateName is required', 'Invalid');
  const input: MachineOperationInput = { metadata: { name } };
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations');
  const finalizers = stringList(metadata['finalizers'], 'metadata.finalizers');
  if (labels !== undefined) input.metadata.labels = labels;
  if (annotations !== undefined) input.metadata.annotations = annotations;
  if (finalizers !== undefined && finalizers.length > 0) input.metadata.finalizers = finalizers;
  if (isJsonObject(object['spec'])) input.spec = object['spec'];
  if (isJsonObject(object['status'])) input.status = object['status'];
  return input;
}

/** What the main resource may change: labels, annotations, finalizers and spec (never status). */
export function mainUpdate(current: MachineOperation, decoded: Decoded): MachineOperation {
  const { metadata, object } = decoded;
  const next: MachineOperation = structuredClone(current);
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations');
  const finalizers = stringList(metadata['finalizers'], 'metadata.finalizers') ?? [];
  if (labels === undefined || Object.keys(labels).length === 0) delete next.metadata.labels;
  else next.metadata.labels = labels;
  if (annotations === undefined || Object.keys(annotations).length === 0) delete next.metadata.annotations;
  else next.metadata.annotations = annotations;
  const added = finalizers.filter((finalizer) => !(current.metadata.finalizers ?? []).includes(finalizer));
  if (current.metadata.deletionTimestamp !== undefined && added.length > 0)
    throw invalid(current.metadata.name, [
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: no new finalizers can be added if the object is being deleted',
        field: 'metadata.finalizers',
      },
    ]);
  if (finalizers.length === 0) delete next.metadata.finalizers;
  else next.metadata.finalizers = finalizers;
  if (isJsonObject(object['spec'])) next.spec = object['spec'];
  else delete next.spec;
  return next;
}

/** The stored shape as plain JSON, for validation and patching. */
export function asJson(op: MachineOperation | MachineOperationInput): JsonObject {
  return { apiVersion: API_VERSION, kind: KIND, ...(structuredClone(op) as unknown as JsonObject) };
}
