// Turning a request body into a custom resource as kube-apiserver decodes one: unknown ObjectMeta
// fields and fields the CRD's schema does not declare are pruned (each one a `299` warning),
// schema defaults fill absent fields, then the metadata and the object are validated (transition
// rules against the stored object on an update); anything wrong is the 422 Status.

import type { CrdModel } from './crd.js';
import { isJsonObject, type JsonObject } from './json.js';
import { decodeMetadata, metadataCauses, stringList, stringMap } from './metadata.js';
import { apiVersionOf, type ResourceDescriptor } from './resources.js';
import { applyDefaults, prune, validateObject } from './schema.js';
import { fail, invalid } from './status.js';
import type { CustomObject, CustomObjectInput, OwnerReference } from './types.js';

export interface Decoded {
  readonly object: JsonObject;
  readonly metadata: JsonObject;
  /** Warning texts (`unknown field "spec.x"`): ObjectMeta's first, then the schema's, sorted, as the server lists them. */
  readonly warnings: readonly string[];
}

export function crdOf(resource: ResourceDescriptor): CrdModel {
  if (resource.crd === undefined) throw new Error(`${resource.plural} is not a custom resource`);
  return resource.crd;
}

/** Prunes and defaults `body` as the server decodes it; `metadata` keeps only ObjectMeta's fields. */
export function decode(body: JsonObject, crd: CrdModel): Decoded {
  const { metadata: rawMetadata, ...rest } = body;
  const { metadata, unknown } = decodeMetadata(rawMetadata);
  const pruned: string[] = [];
  const object = applyDefaults(prune(rest, crd.schema, '', pruned), crd.schema) as JsonObject;
  const warnings = [...unknown, ...pruned.sort()].map((field) => `unknown field "${field}"`);
  return { object, metadata, warnings };
}

/** The 422 for everything wrong with `object` (`old`: the stored object an update replaces), or nothing. */
export function requireValid(resource: ResourceDescriptor, object: CustomObject, old?: CustomObject): void {
  const json = asJson(resource, object);
  const causes = [
    ...metadataCauses(json['metadata'] as JsonObject),
    ...validateObject(json, crdOf(resource), old === undefined ? undefined : asJson(resource, old)),
  ];
  if (causes.length > 0) throw invalid(resource, object.metadata.name, causes);
}

/** A create input from a decoded body: name (or generateName), labels, annotations, owners, finalizers, spec, status. */
export function createInput(decoded: Decoded): CustomObjectInput {
  const { metadata, object } = decoded;
  let name = metadata['name'];
  const generateName = metadata['generateName'];
  if ((typeof name !== 'string' || name === '') && typeof generateName === 'string' && generateName !== '')
    name = generateName + Math.random().toString(36).slice(2, 7);
  if (typeof name !== 'string' || name === '')
    throw fail(422, 'metadata.name: Required value: name or generateName is required', 'Invalid');
  const input: CustomObjectInput = { metadata: { name } };
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations');
  const finalizers = stringList(metadata['finalizers'], 'metadata.finalizers');
  const ownerReferences = metadata['ownerReferences'] as OwnerReference[] | undefined;
  if (labels !== undefined) input.metadata.labels = labels;
  if (annotations !== undefined) input.metadata.annotations = annotations;
  if (ownerReferences !== undefined && ownerReferences.length > 0) input.metadata.ownerReferences = ownerReferences;
  if (finalizers !== undefined && finalizers.length > 0) input.metadata.finalizers = finalizers;
  if (isJsonObject(object['spec'])) input.spec = object['spec'];
  if (isJsonObject(object['status'])) input.status = object['status'];
  return input;
}

/** What the main resource may change: labels, annotations, owner references, finalizers and spec (never status). */
export function mainUpdate(resource: ResourceDescriptor, current: CustomObject, decoded: Decoded): CustomObject {
  const { metadata, object } = decoded;
  const next: CustomObject = structuredClone(current);
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations');
  const ownerReferences = (metadata['ownerReferences'] as OwnerReference[] | undefined) ?? [];
  const finalizers = stringList(metadata['finalizers'], 'metadata.finalizers') ?? [];
  if (labels === undefined || Object.keys(labels).length === 0) delete next.metadata.labels;
  else next.metadata.labels = labels;
  if (annotations === undefined || Object.keys(annotations).length === 0) delete next.metadata.annotations;
  else next.metadata.annotations = annotations;
  if (ownerReferences.length === 0) delete next.metadata.ownerReferences;
  else next.metadata.ownerReferences = ownerReferences;
  const added = finalizers.filter((finalizer) => !(current.metadata.finalizers ?? []).includes(finalizer));
  if (current.metadata.deletionTimestamp !== undefined && added.length > 0)
    throw invalid(resource, current.metadata.name, [
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

/** The stored shape as plain (mutable) JSON, for validation and patching. */
export function asJson(resource: ResourceDescriptor, object: CustomObject | CustomObjectInput): JsonObject {
  return {
    apiVersion: apiVersionOf(resource),
    kind: resource.kind,
    ...(structuredClone(object) as unknown as JsonObject),
  };
}
