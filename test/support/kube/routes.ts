// Request routing: discovery, Nodes and the MachineOperation resource with its status subresource.
// Each handler either answers or throws a StatusError, which dispatch() turns into the JSON Status
// answer a real kube-apiserver would give.

import type { ServerResponse } from 'node:http';
import { discoveryDocument } from './discovery.js';
import type { KubeRequest } from './faults.js';
import { isWatch } from './faults.js';
import { isJsonObject, type JsonObject, type JsonValue, mergePatch, parseJson } from './json.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { fail, failure, type KubeStatus, StatusError } from './status.js';
import type { KubeStore } from './store.js';
import type { Timers } from './timers.js';
import {
  API_VERSION,
  GROUP,
  KIND,
  LIST_KIND,
  type MachineOperation,
  type MachineOperationInput,
  PLURAL,
  VERSION,
} from './types.js';
import { WatchStream } from './watch.js';

export interface RouteContext {
  readonly store: KubeStore;
  readonly timers: Timers;
  readonly selectableFields: boolean;
  readonly bookmarkIntervalMs: number;
  /** host:port, for the `serverAddressByClientCIDRs` of /api. */
  readonly serverAddress: string;
  /** Consumes one armed conflictNext() fault, if any. */
  readonly takeConflict: () => boolean;
  /** Open watch streams; each removes itself when its connection closes. */
  readonly watches: Set<WatchStream>;
}

const RESOURCE_PATH = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
const MERGE_PATCH = 'application/merge-patch+json';

/** `body` is always plain JSON data (objects built from JSON or from the typed shapes in types.ts). */
export function sendJson(res: ServerResponse, code: number, body: object): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendStatus(res: ServerResponse, status: KubeStatus): void {
  sendJson(res, status.code, status);
}

export function dispatch(ctx: RouteContext, req: KubeRequest, res: ServerResponse): void {
  try {
    route(ctx, req, res);
  } catch (error) {
    if (error instanceof StatusError) sendStatus(res, error.status);
    else sendStatus(res, failure(500, `fake API server: ${error instanceof Error ? error.message : String(error)}`));
  }
}

function route(ctx: RouteContext, req: KubeRequest, res: ServerResponse): void {
  const { method, path } = req;
  const document = discoveryDocument(path, ctx.serverAddress, ctx.selectableFields);
  if (document !== undefined) {
    requireMethod(method, ['GET']);
    return sendJson(res, 200, document);
  }

  if (path === '/api/v1/nodes') {
    requireMethod(method, ['GET']);
    const items = ctx.store.listNodes();
    return sendJson(res, 200, {
      apiVersion: 'v1',
      kind: 'NodeList',
      metadata: { resourceVersion: String(ctx.store.currentRv()) },
      items,
    });
  }
  const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(path);
  if (node !== null) {
    requireMethod(method, ['GET']);
    const name = decodeURIComponent(node[1] ?? '');
    const found = ctx.store.getNode(name);
    if (found === undefined) throw fail(404, `nodes "${name}" not found`, 'NotFound', { name, kind: 'nodes' });
    return sendJson(res, 200, found);
  }

  if (path === RESOURCE_PATH) {
    requireMethod(method, ['GET', 'POST']);
    if (method === 'POST') return sendJson(res, 201, ctx.store.create(createInput(req), false));
    if (isWatch(req.query)) return startWatch(ctx, req, res);
    return sendJson(res, 200, list(ctx, req.query));
  }
  const object = new RegExp(`^${RESOURCE_PATH}/([^/]+)(/status)?$`).exec(path);
  if (object !== null) {
    const name = decodeURIComponent(object[1] ?? '');
    if (object[2] === undefined) {
      // The fake only implements what the daemon and its tests use on the main resource.
      requireMethod(method, ['GET', 'DELETE']);
      if (method === 'DELETE') return sendJson(res, 200, ctx.store.delete(name));
      return sendJson(res, 200, ctx.store.require(name));
    }
    requireMethod(method, ['GET', 'PUT', 'PATCH']);
    if (method === 'GET') return sendJson(res, 200, ctx.store.require(name));
    return sendJson(res, 200, method === 'PUT' ? putStatus(ctx, req, name) : patchStatus(ctx, req, name));
  }

  throw fail(404, 'the server could not find the requested resource', 'NotFound');
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method))
    throw fail(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
}

function mediaType(req: KubeRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function jsonBody(req: KubeRequest): JsonObject {
  const parsed = parseJson(req.body ?? '');
  if (!isJsonObject(parsed)) throw fail(400, 'the request body is not a JSON object', 'BadRequest');
  return parsed;
}

function requireJson(req: KubeRequest): void {
  const type = mediaType(req);
  // kube-apiserver also takes YAML and protobuf; the fake only speaks JSON, so anything else is 415.
  if (type !== 'application/json')
    throw fail(415, `the fake API server only accepts application/json bodies, got "${type}"`, 'UnsupportedMediaType');
}

function stringMap(value: JsonValue | undefined, field: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw fail(400, `${field} must be a map of strings`, 'BadRequest');
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function optionalObject(value: JsonValue | undefined, field: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value)) throw fail(422, `${field}: Invalid value: must be an object`, 'Invalid');
  return value;
}

function checkTypeMeta(body: JsonObject): void {
  const { apiVersion, kind } = body;
  if (apiVersion !== undefined && apiVersion !== API_VERSION) {
    throw fail(
      400,
      `the API version in the data (${String(apiVersion)}) does not match the expected API version (${API_VERSION})`,
      'BadRequest',
    );
  }
  if (kind !== undefined && kind !== KIND)
    throw fail(400, `the kind in the data (${String(kind)}) does not match the expected kind (${KIND})`, 'BadRequest');
}

/** Validates a POST body into a create input; unknown top-level fields are pruned, as a structural schema does. */
function createInput(req: KubeRequest): MachineOperationInput {
  requireJson(req);
  const body = jsonBody(req);
  checkTypeMeta(body);
  const metadata = optionalObject(body['metadata'], 'metadata') ?? {};
  let name = metadata['name'];
  const generateName = metadata['generateName'];
  if ((typeof name !== 'string' || name === '') && typeof generateName === 'string' && generateName !== '') {
    name = generateName + Math.random().toString(36).slice(2, 7);
  }
  if (typeof name !== 'string' || name === '')
    throw fail(422, 'metadata.name: Required value: name or generateName is required', 'Invalid');
  const input: MachineOperationInput = { metadata: { name } };
  const labels = stringMap(metadata['labels'], 'metadata.labels');
  const annotations = stringMap(metadata['annotations'], 'metadata.annotations');
  if (labels !== undefined) input.metadata.labels = labels;
  if (annotations !== undefined) input.metadata.annotations = annotations;
  const spec = optionalObject(body['spec'], 'spec');
  if (spec !== undefined) input.spec = spec;
  return input;
}

function putStatus(ctx: RouteContext, req: KubeRequest, name: string): MachineOperation {
  requireJson(req);
  const body = jsonBody(req);
  checkTypeMeta(body);
  const metadata = optionalObject(body['metadata'], 'metadata') ?? {};
  if (metadata['name'] !== undefined && metadata['name'] !== name) {
    throw fail(
      400,
      `the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`,
      'BadRequest',
    );
  }
  const rv = metadata['resourceVersion'];
  ctx.store.require(name); // 404 before 422/409, as the real update path reads the object first
  // Custom resources do not allow unconditional updates: PUT must carry the version it is based on.
  if (typeof rv !== 'string' || rv === '')
    throw fail(422, 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update', 'Invalid');
  const status = optionalObject(body['status'], 'status');
  if (ctx.takeConflict()) throw injectedConflict(name);
  return ctx.store.writeStatus(name, status, rv);
}

/** RFC 7386 merge patch of the status subresource: every field other than `status` is ignored. */
function patchStatus(ctx: RouteContext, req: KubeRequest, name: string): MachineOperation {
  // The client's default patch type is JSON Patch; accepting it here would hide a client that
  // forgot to select merge patch, so only merge patch is served.
  const type = mediaType(req);
  if (type !== MERGE_PATCH) {
    throw fail(
      415,
      `the body of the request was in an unknown format - accepted media types include: ${MERGE_PATCH}`,
      'UnsupportedMediaType',
    );
  }
  const patch = jsonBody(req);
  const current = ctx.store.require(name);
  const metadata = patch['metadata'];
  const precondition =
    isJsonObject(metadata) && typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : undefined;
  let status = current.status;
  const statusPatch = patch['status'];
  if (statusPatch !== undefined) {
    const merged = mergePatch(current.status, statusPatch);
    status = optionalObject(merged, 'status');
  }
  if (ctx.takeConflict()) throw injectedConflict(name);
  return ctx.store.writeStatus(name, status, precondition);
}

function injectedConflict(name: string): StatusError {
  return fail(
    409,
    `Operation cannot be fulfilled on ${PLURAL}.${GROUP} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    'Conflict',
    { name, group: GROUP, kind: PLURAL },
  );
}

interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  const parsed = parseJson(Buffer.from(raw, 'base64url').toString('utf8'));
  if (isJsonObject(parsed) && typeof parsed['rv'] === 'number' && typeof parsed['start'] === 'string') {
    return { rv: parsed['rv'], start: parsed['start'] };
  }
  throw fail(400, 'continue key is not valid: incorrect encoded start resourceVersion', 'BadRequest');
}

function positiveInt(raw: string | undefined, field: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw fail(400, `invalid ${field}: ${raw}`, 'BadRequest');
  return n === 0 ? undefined : n;
}

/**
 * A page of the list. Later pages report the first page's resourceVersion, as a real server does;
 * unlike one, they show current objects rather than a snapshot at that version.
 */
interface MachineOperationList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: JsonObject;
  readonly items: MachineOperation[];
}

function list(ctx: RouteContext, query: Readonly<Record<string, string>>): MachineOperationList {
  const fieldSelector = parseFieldSelector(query['fieldSelector'], ctx.selectableFields);
  const labelSelector = parseLabelSelector(query['labelSelector']);
  const limit = positiveInt(query['limit'], 'limit');
  const token = query['continue'] ? decodeContinue(query['continue']) : undefined;
  if (token !== undefined && ctx.store.isExpired(token.rv)) {
    throw fail(
      410,
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      'Expired',
    );
  }
  const rv = token?.rv ?? ctx.store.currentRv();
  const matching = ctx.store
    .list()
    .filter((op) => token === undefined || op.metadata.name > token.start)
    .filter((op) => fieldSelector(op) && labelSelector(op));
  const items = limit === undefined ? matching : matching.slice(0, limit);
  const metadata: JsonObject = { resourceVersion: String(rv) };
  const last = items.at(-1);
  if (items.length < matching.length && last !== undefined) {
    metadata['continue'] = encodeContinue({ rv, start: last.metadata.name });
    if (query['fieldSelector'] === undefined && query['labelSelector'] === undefined) {
      metadata['remainingItemCount'] = matching.length - items.length;
    }
  }
  return { apiVersion: API_VERSION, kind: LIST_KIND, metadata, items };
}

function startWatch(ctx: RouteContext, req: KubeRequest, res: ServerResponse): void {
  // Selector errors are answered as HTTP 400 before any event, as a real server does.
  const fieldSelector = parseFieldSelector(req.query['fieldSelector'], ctx.selectableFields);
  const labelSelector = parseLabelSelector(req.query['labelSelector']);
  const rawRv = req.query['resourceVersion'];
  let resourceVersion: number | undefined;
  if (rawRv !== undefined && rawRv !== '' && rawRv !== '0') {
    resourceVersion = Number(rawRv);
    if (!Number.isInteger(resourceVersion) || resourceVersion < 0)
      throw fail(400, `invalid resource version: ${rawRv}`, 'BadRequest');
  }
  const bookmarks = req.query['allowWatchBookmarks'] === 'true' || req.query['allowWatchBookmarks'] === '1';
  const stream = new WatchStream({
    res,
    store: ctx.store,
    timers: ctx.timers,
    query: req.query,
    selector: (op) => fieldSelector(op) && labelSelector(op),
    resourceVersion,
    bookmarkIntervalMs: bookmarks ? ctx.bookmarkIntervalMs : undefined,
    timeoutSeconds: positiveInt(req.query['timeoutSeconds'], 'timeoutSeconds'),
    onClose: () => ctx.watches.delete(stream),
  });
  ctx.watches.add(stream);
  stream.start();
}
