// The write paths of the MachineOperation resource, with the status-subresource rules a real
// server applies: a create drops `status`; the main resource changes metadata and spec and
// ignores `status`; /status changes `status` and ignores everything else. Patches are JSON merge
// patch or JSON Patch (strategic merge is not defined for custom resources, and server-side apply
// is not implemented). Every stored result passes the CRD's schema first.

import type { CrdModel } from './crd.js';
import type { KubeRequest } from './faults.js';
import { isJsonObject, type JsonObject, JsonPatchError, jsonPatch, mergePatch, parseJson } from './json.js';
import { asJson, createInput, decode, type Decoded, mainUpdate, requireValid } from './objects.js';
import { fail, invalid } from './status.js';
import { conflict, type KubeStore } from './store.js';
import { API_VERSION, KIND, type MachineOperation, type MachineOperationInput } from './types.js';

export interface WriteContext {
  readonly store: KubeStore;
  readonly crd: CrdModel;
  /** Consumes one armed conflictNext() fault, if any (status writes only). */
  readonly takeConflict: () => boolean;
}

export interface Written {
  readonly code: number;
  readonly object: MachineOperation;
  readonly warnings: readonly string[];
}

const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

function mediaType(req: KubeRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function jsonBody(req: KubeRequest): JsonObject {
  // kube-apiserver also takes YAML and protobuf; the fake only speaks JSON, so anything else is 415.
  const type = mediaType(req);
  if (type !== 'application/json')
    throw fail(415, `the fake API server only accepts application/json bodies, got "${type}"`, 'UnsupportedMediaType');
  const parsed = parseJson(req.body ?? '');
  if (!isJsonObject(parsed)) throw fail(400, 'the request body is not a JSON object', 'BadRequest');
  const { apiVersion, kind } = parsed;
  if (apiVersion !== undefined && apiVersion !== API_VERSION)
    throw fail(
      400,
      `the API version in the data (${String(apiVersion)}) does not match the expected API version (${API_VERSION})`,
      'BadRequest',
    );
  if (kind !== undefined && kind !== KIND)
    throw fail(400, `the kind in the data (${String(kind)}) does not match the expected kind (${KIND})`, 'BadRequest');
  return parsed;
}

/** The object a PATCH asks for: `current` with the merge patch or JSON Patch applied. */
function patched(req: KubeRequest, current: MachineOperation): JsonObject {
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
    return mergePatch(asJson(current), patch) as JsonObject;
  }
  if (!Array.isArray(patch)) throw fail(400, 'error decoding patch: the body is not a JSON array', 'BadRequest');
  try {
    const result = jsonPatch(asJson(current), patch);
    if (!isJsonObject(result)) throw new JsonPatchError('the patch replaced the object');
    return result;
  } catch (error) {
    if (!(error instanceof JsonPatchError)) throw error;
    throw fail(422, 'the server rejected our request due to an error in our request', 'Invalid', {});
  }
}

/** The decoded body of a PUT or PATCH of `name`, and the resourceVersion it is based on. */
function incoming(
  ctx: WriteContext,
  req: KubeRequest,
  name: string,
): { current: MachineOperation; decoded: Decoded; basedOn: string | undefined } {
  const current = ctx.store.require(name); // 404 before 400/422/409, as the real update path reads first
  const body = req.method === 'PUT' ? jsonBody(req) : patched(req, current);
  const decoded = decode(body, ctx.crd);
  const bodyName = decoded.metadata['name'];
  if (bodyName !== undefined && bodyName !== name)
    throw fail(
      400,
      `the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`,
      'BadRequest',
    );
  const rv = decoded.metadata['resourceVersion'];
  // Custom resources do not allow unconditional updates: PUT must carry the version it is based on.
  if (req.method === 'PUT' && (typeof rv !== 'string' || rv === ''))
    throw invalid(
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
  return { current, decoded, basedOn: typeof rv === 'string' && rv !== '' ? rv : undefined };
}

export function createOperation(ctx: WriteContext, req: KubeRequest): Written {
  const decoded = decode(jsonBody(req), ctx.crd);
  const input = createInput(decoded);
  delete input.status; // the status subresource is on: a create never sets status
  const candidate: MachineOperation = { apiVersion: API_VERSION, kind: KIND, ...input };
  requireValid(candidate, ctx.crd);
  return { code: 201, object: ctx.store.create(input, false), warnings: decoded.warnings };
}

/** PUT or PATCH of the main resource: metadata and spec change, status is kept as stored. */
export function updateOperation(ctx: WriteContext, req: KubeRequest, name: string): Written {
  const { current, decoded, basedOn } = incoming(ctx, req, name);
  const next = mainUpdate(current, decoded);
  requireValid(next, ctx.crd);
  return { code: 200, object: ctx.store.update(name, next, basedOn), warnings: decoded.warnings };
}

/** PUT or PATCH of /status: only status changes; spec and metadata in the body are ignored. */
export function updateStatus(ctx: WriteContext, req: KubeRequest, name: string): Written {
  const { current, decoded, basedOn } = incoming(ctx, req, name);
  const status = isJsonObject(decoded.object['status']) ? decoded.object['status'] : undefined;
  const next: MachineOperation = { ...current, ...(status === undefined ? {} : { status }) };
  if (status === undefined) delete next.status;
  requireValid(next, ctx.crd);
  if (basedOn !== undefined && basedOn !== current.metadata.resourceVersion) throw conflict(name);
  if (ctx.takeConflict()) throw conflict(name);
  return { code: 200, object: ctx.store.writeStatus(name, status, basedOn), warnings: decoded.warnings };
}

/** A seeded operation (the test API's create): pruned and validated as a POST, but its status kept. */
export function seededInput(crd: CrdModel, op: MachineOperation | JsonObject): MachineOperationInput {
  const decoded = decode(asJson(op as MachineOperation), crd);
  const input = createInput(decoded);
  requireValid({ apiVersion: API_VERSION, kind: KIND, ...input }, crd);
  return input;
}
