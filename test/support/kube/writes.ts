// The write paths of a custom resource, with the status-subresource rules a real server applies: a
// create drops `status`; the main resource changes metadata and spec and ignores `status`;
// /status changes `status` and ignores everything else. Patches are JSON merge patch or JSON
// Patch (strategic merge is not defined for custom resources, and server-side apply is not
// implemented). Every stored result passes the CRD's schema and rules first.

import type { CustomResourceStore } from './custom-store.js';
import type { KubeRequest } from './faults.js';
import { isJsonObject, type JsonObject, JsonPatchError, jsonPatch, mergePatch, parseJson } from './json.js';
import { asJson, createInput, crdOf, decode, type Decoded, mainUpdate, requireValid } from './objects.js';
import { apiVersionOf, conflict, type ResourceDescriptor } from './resources.js';
import { fail, invalid } from './status.js';
import type { CustomObject, CustomObjectInput } from './types.js';

export interface WriteContext {
  /** Consumes one armed conflictNext() fault, if any (status writes only). */
  readonly takeConflict: () => boolean;
}

export interface Written<T = CustomObject> {
  readonly code: number;
  readonly object: T;
  readonly warnings: readonly string[];
}

export const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

export function mediaType(req: KubeRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** A PUT or POST body: a JSON object whose apiVersion and kind, when given, are the resource's. */
export function jsonBody(req: KubeRequest, resource: ResourceDescriptor): JsonObject {
  // kube-apiserver also takes YAML and protobuf; the fake only speaks JSON, so anything else is 415.
  const type = mediaType(req);
  if (type !== 'application/json')
    throw fail(415, `the fake API server only accepts application/json bodies, got "${type}"`, 'UnsupportedMediaType');
  const parsed = parseJson(req.body ?? '');
  if (!isJsonObject(parsed)) throw fail(400, 'the request body is not a JSON object', 'BadRequest');
  const { apiVersion, kind } = parsed;
  const expected = apiVersionOf(resource);
  if (apiVersion !== undefined && apiVersion !== expected)
    throw fail(
      400,
      `the API version in the data (${String(apiVersion)}) does not match the expected API version (${expected})`,
      'BadRequest',
    );
  if (kind !== undefined && kind !== resource.kind)
    throw fail(
      400,
      `the kind in the data (${String(kind)}) does not match the expected kind (${resource.kind})`,
      'BadRequest',
    );
  return parsed;
}

/** The object a PATCH asks for: `current` with the merge patch or JSON Patch applied. */
export function patched(req: KubeRequest, current: JsonObject): JsonObject {
  const type = mediaType(req);
  if (type !== MERGE_PATCH && type !== JSON_PATCH)
    throw fail(
      415,
      `the body of the request was in an unknown format - accepted media types include: ${JSON_PATCH}, ${MERGE_PATCH}`,
      'UnsupportedMediaType',
    );
  const patch = parseJson(req.body ?? '');
  if (type === MERGE_PATCH) {
    if (!isJsonObject(patch)) throw fail(400, 'error decoding patch: the body is not a JSON object', 'BadRequest');
    return mergePatch(current, patch) as JsonObject;
  }
  if (!Array.isArray(patch)) throw fail(400, 'error decoding patch: the body is not a JSON array', 'BadRequest');
  try {
    const result = jsonPatch(current, patch);
    if (!isJsonObject(result)) throw new JsonPatchError('the patch replaced the object');
    return result;
  } catch (error) {
    if (!(error instanceof JsonPatchError)) throw error;
    throw fail(422, 'the server rejected our request due to an error in our request', 'Invalid', {});
  }
}

/** The 422 a PUT without metadata.resourceVersion gets: the resource does not allow unconditional updates. */
export function resourceVersionRequired(resource: ResourceDescriptor, name: string): Error {
  return invalid(
    resource,
    name,
    [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 0: must be specified for an update',
        field: 'metadata.resourceVersion',
      },
    ],
    'resource',
  );
}

/** The decoded body of a PUT or PATCH of `name`, and the resourceVersion it is based on. */
function incoming(
  store: CustomResourceStore,
  req: KubeRequest,
  name: string,
): { current: CustomObject; decoded: Decoded; basedOn: string | undefined } {
  const { resource } = store;
  const current = store.require(name); // 404 before 400/422/409, as the real update path reads first
  const body = req.method === 'PUT' ? jsonBody(req, resource) : patched(req, asJson(resource, current));
  const decoded = decode(body, crdOf(resource));
  const bodyName = decoded.metadata['name'];
  if (bodyName !== undefined && bodyName !== name)
    throw fail(
      400,
      `the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`,
      'BadRequest',
    );
  const rv = decoded.metadata['resourceVersion'];
  if (req.method === 'PUT' && (typeof rv !== 'string' || rv === '')) throw resourceVersionRequired(resource, name);
  return { current, decoded, basedOn: typeof rv === 'string' && rv !== '' ? rv : undefined };
}

export function createObject(store: CustomResourceStore, req: KubeRequest): Written {
  const { resource } = store;
  const decoded = decode(jsonBody(req, resource), crdOf(resource));
  const input = createInput(decoded);
  delete input.status; // the status subresource is on: a create never sets status
  requireValid(resource, { apiVersion: apiVersionOf(resource), kind: resource.kind, ...input });
  return { code: 201, object: store.create(input, false), warnings: decoded.warnings };
}

/** PUT or PATCH of the main resource: metadata and spec change, status is kept as stored. */
export function updateObject(store: CustomResourceStore, req: KubeRequest, name: string): Written {
  const { current, decoded, basedOn } = incoming(store, req, name);
  const next = mainUpdate(store.resource, current, decoded);
  if (basedOn !== undefined && basedOn !== current.metadata.resourceVersion) throw conflict(store.resource, name);
  requireValid(store.resource, next, current);
  return { code: 200, object: store.update(name, next, basedOn), warnings: decoded.warnings };
}

/** PUT or PATCH of /status: only status changes; spec and metadata in the body are ignored. */
export function updateStatus(ctx: WriteContext, store: CustomResourceStore, req: KubeRequest, name: string): Written {
  const { current, decoded, basedOn } = incoming(store, req, name);
  const status = isJsonObject(decoded.object['status']) ? decoded.object['status'] : undefined;
  const next: CustomObject = { ...structuredClone(current), ...(status === undefined ? {} : { status }) };
  if (status === undefined) delete next.status;
  // A stale precondition is answered before validation, as the registry checks it first.
  if (basedOn !== undefined && basedOn !== current.metadata.resourceVersion) throw conflict(store.resource, name);
  requireValid(store.resource, next, current);
  if (ctx.takeConflict()) throw conflict(store.resource, name);
  return { code: 200, object: store.writeStatus(name, status, basedOn), warnings: decoded.warnings };
}

/** A seeded object (the test API's create): pruned, defaulted and validated as a POST, but its status kept. */
export function seededInput(resource: ResourceDescriptor, object: CustomObjectInput | JsonObject): CustomObjectInput {
  const decoded = decode(asJson(resource, object as CustomObjectInput), crdOf(resource));
  const input = createInput(decoded);
  requireValid(resource, { apiVersion: apiVersionOf(resource), kind: resource.kind, ...input });
  return input;
}
