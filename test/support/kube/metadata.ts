// ObjectMeta as kube-apiserver decodes and validates it for every kind: fields ObjectMeta does not
// have are dropped with a `299` warning, a field of the wrong JSON type is a 400 (the decoder's
// error), and the name, labels, annotations and owner references are validated with the causes a
// real server reports (field paths without list indexes, as ValidateObjectMeta words them).

import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import type { Cause } from './schema.js';
import { fail } from './status.js';

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
const OWNER_REFERENCE_FIELDS = new Set(['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion']);
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ANNOTATIONS_LIMIT = 256 * 1024;

export interface DecodedMetadata {
  readonly metadata: JsonObject;
  /** `metadata.<field>` paths of what was dropped, for the `unknown field` warnings. */
  readonly unknown: readonly string[];
}

export function stringMap(value: JsonValue | undefined, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw fail(400, `${field} must be a map of strings`, 'BadRequest');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

export function stringList(value: JsonValue | undefined, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw fail(400, `${field} must be a list of strings`, 'BadRequest');
  return value.map(String);
}

function decodeOwnerReferences(value: JsonValue | undefined, unknown: string[]): JsonObject[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw fail(400, 'metadata.ownerReferences must be a list', 'BadRequest');
  return value.map((reference, index) => {
    if (!isJsonObject(reference)) throw fail(400, 'an owner reference must be an object', 'BadRequest');
    const kept: JsonObject = {};
    for (const [key, field] of Object.entries(reference)) {
      if (!OWNER_REFERENCE_FIELDS.has(key)) unknown.push(`metadata.ownerReferences[${index}].${key}`);
      else if (field === null) continue;
      else if (typeof field !== (key === 'controller' || key === 'blockOwnerDeletion' ? 'boolean' : 'string'))
        throw fail(400, `metadata.ownerReferences[${index}].${key} has the wrong type`, 'BadRequest');
      else kept[key] = field;
    }
    return kept;
  });
}

/** ObjectMeta's fields of `raw`, type-checked as the decoder does, the rest reported as unknown. */
export function decodeMetadata(raw: JsonValue | undefined): DecodedMetadata {
  if (raw !== undefined && raw !== null && !isJsonObject(raw))
    throw fail(400, 'metadata must be an object', 'BadRequest');
  const metadata: JsonObject = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (OBJECT_META_FIELDS.has(key)) metadata[key] = value;
    else unknown.push(`metadata.${key}`);
  }
  for (const key of ['name', 'generateName', 'namespace', 'resourceVersion'])
    if (metadata[key] !== undefined && metadata[key] !== null && typeof metadata[key] !== 'string')
      throw fail(400, `metadata.${key} must be a string`, 'BadRequest');
  stringMap(metadata['labels'], 'metadata.labels');
  stringMap(metadata['annotations'], 'metadata.annotations');
  stringList(metadata['finalizers'], 'metadata.finalizers');
  const references = decodeOwnerReferences(metadata['ownerReferences'], unknown);
  if (references === undefined) delete metadata['ownerReferences'];
  else metadata['ownerReferences'] = references;
  return { metadata, unknown: unknown.sort() };
}

export function isSubdomain(text: string): boolean {
  return text.length <= 253 && SUBDOMAIN.test(text);
}

/** What is wrong with `text` as a qualified name (`[prefix/]name`, as label keys are), if anything. */
export function qualifiedNameProblems(text: string): string[] {
  const parts = text.split('/');
  if (parts.length > 2) return ['a qualified name must consist of a prefix and a name separated by "/"'];
  const [name = '', prefix] = parts.length === 2 ? [parts[1], parts[0]] : [parts[0], undefined];
  const problems: string[] = [];
  if (prefix !== undefined && (prefix === '' || !isSubdomain(prefix)))
    problems.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
  if (name === '') problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (!NAME_PART.test(name)) problems.push('name part must consist of alphanumeric characters');
  return problems;
}

export function nameCauses(name: string): Cause[] {
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

function mapCauses(map: Record<string, string>, field: string, checkValues: boolean): Cause[] {
  const causes: Cause[] = [];
  const invalid = (value: string, why: string): number =>
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${why}`, field });
  for (const [key, value] of Object.entries(map)) {
    for (const problem of qualifiedNameProblems(key)) invalid(key, problem);
    if (!checkValues) continue;
    if (value.length > 63) invalid(value, 'must be no more than 63 bytes');
    if (!LABEL_VALUE.test(value))
      invalid(value, 'a valid label must be an empty string or consist of alphanumeric characters');
  }
  return causes;
}

function ownerReferenceCauses(references: readonly JsonObject[]): Cause[] {
  const causes: Cause[] = [];
  for (const reference of references)
    for (const key of ['apiVersion', 'kind', 'name', 'uid'])
      if (typeof reference[key] !== 'string' || reference[key] === '')
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: "": ${key === 'apiVersion' ? 'version must' : 'must'} not be empty`,
          field: `metadata.ownerReferences.${key}`,
        });
  if (references.filter((reference) => reference['controller'] === true).length > 1)
    causes.push({
      reason: 'FieldValueInvalid',
      message: 'Invalid value: Only one reference can have Controller set to true',
      field: 'metadata.ownerReferences',
    });
  return causes;
}

/** Every problem ValidateObjectMeta finds in `metadata` (already decoded): name, labels, annotations, owners. */
export function metadataCauses(metadata: JsonObject): Cause[] {
  const name = metadata['name'];
  const causes = typeof name === 'string' && name !== '' ? nameCauses(name) : [];
  const labels = stringMap(metadata['labels'], 'metadata.labels') ?? {};
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations') ?? {};
  causes.push(...mapCauses(labels, 'metadata.labels', true), ...mapCauses(annotations, 'metadata.annotations', false));
  const size = Object.entries(annotations).reduce((total, [k, v]) => total + k.length + v.length, 0);
  if (size > ANNOTATIONS_LIMIT)
    causes.push({
      reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${ANNOTATIONS_LIMIT} bytes`,
      field: 'metadata.annotations',
    });
  const references = metadata['ownerReferences'];
  if (Array.isArray(references)) causes.push(...ownerReferenceCauses(references.filter(isJsonObject)));
  return causes;
}
