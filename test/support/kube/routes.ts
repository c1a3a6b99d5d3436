// Request routing: discovery, then every served resource by the same path grammar kube-apiserver
// uses (`/api/v1/…` for the core group, `/apis/<group>/<version>/…` otherwise, with
// `namespaces/<ns>/` before a namespaced resource), onto the handlers of resource-handlers.ts.
// Each handler either answers or throws a StatusError, which dispatch() turns into the JSON
// Status answer a real kube-apiserver would give; a verb a resource does not serve is a 405.

import type { ServerResponse } from 'node:http';
import { type CollectionContext, list, startWatch } from './collection.js';
import { discoveryDocument } from './discovery.js';
import type { KubeRequest } from './faults.js';
import { isWatch } from './faults.js';
import { jsonOf } from './object-collection.js';
import type { ResourceHandler } from './resource-handlers.js';
import { fail, failure, type KubeStatus, StatusError } from './status.js';
import type { Written } from './writes.js';

export interface RouteContext extends CollectionContext {
  /** host:port, for the `serverAddressByClientCIDRs` of /api. */
  readonly serverAddress: string;
  /** Whether MachineOperations' spec.machineRef is selectable (for /version's claimed minor). */
  readonly selectableFields: boolean;
  /** `<group>/<version>/<plural>` ("" group for core) to the handler of that resource. */
  readonly handlers: ReadonlyMap<string, ResourceHandler>;
}

/**
 * `body` is always plain JSON data (objects built from JSON or from the typed shapes in types.ts).
 * `warnings` become `Warning: 299 - "<text>"` headers, one per warning, as kube-apiserver sends them.
 */
export function sendJson(res: ServerResponse, code: number, body: object, warnings: readonly string[] = []): void {
  // Stored objects are frozen and serialized once; anything else is serialized as it is now.
  sendText(res, code, Object.isFrozen(body) ? jsonOf(body) : JSON.stringify(body), warnings);
}

function sendText(res: ServerResponse, code: number, text: string, warnings: readonly string[] = []): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
  };
  if (warnings.length > 0) headers['Warning'] = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(text);
}

export function sendStatus(res: ServerResponse, status: KubeStatus): void {
  sendJson(res, status.code, status);
}

export async function dispatch(ctx: RouteContext, req: KubeRequest, res: ServerResponse): Promise<void> {
  try {
    await route(ctx, req, res);
  } catch (error) {
    if (error instanceof StatusError) sendStatus(res, error.status);
    else sendStatus(res, failure(500, `fake API server: ${error instanceof Error ? error.message : String(error)}`));
  }
}

const NOT_FOUND = (): StatusError => fail(404, 'the server could not find the requested resource', 'NotFound');

interface Target {
  readonly handler: ResourceHandler;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

/** The resource, namespace, name and subresource a path names, or a 404. */
function target(ctx: RouteContext, path: string): Target {
  const core = /^\/api\/(v1)\/(.+)$/.exec(path);
  const grouped = core === null ? /^\/apis\/([^/]+)\/([^/]+)\/(.+)$/.exec(path) : null;
  const [group, version, rest] = core !== null ? ['', core[1], core[2]] : [grouped?.[1], grouped?.[2], grouped?.[3]];
  if (version === undefined || rest === undefined) throw NOT_FOUND();
  const segments = rest.split('/').map((segment) => decodeURIComponent(segment));
  const lookup = (plural: string | undefined): ResourceHandler | undefined =>
    ctx.handlers.get(`${group ?? ''}/${version}/${plural ?? ''}`);
  const inNamespace = segments[0] === 'namespaces' && segments.length >= 3 ? lookup(segments[2]) : undefined;
  if (inNamespace?.resource.namespaced === true) {
    const [, namespace, , name, subresource, extra] = segments;
    if (extra !== undefined) throw NOT_FOUND();
    return { handler: inNamespace, namespace, name, subresource };
  }
  const [plural, name, subresource, extra] = segments;
  const handler = lookup(plural);
  // A namespaced resource is reachable without a namespace only as the list across namespaces.
  if (handler === undefined || extra !== undefined || (handler.resource.namespaced && name !== undefined))
    throw NOT_FOUND();
  return { handler, namespace: undefined, name, subresource };
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method))
    throw fail(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
}

function sendWritten(res: ServerResponse, written: Written<object>): void {
  sendJson(res, written.code, written.object, written.warnings);
}

async function route(ctx: RouteContext, req: KubeRequest, res: ServerResponse): Promise<void> {
  const { method, path } = req;
  const document = discoveryDocument(path, ctx.serverAddress, ctx.selectableFields);
  if (document !== undefined) {
    requireMethod(method, ['GET']);
    return sendJson(res, 200, document);
  }
  const { handler, namespace, name, subresource } = target(ctx, path);
  if (name === undefined) {
    // A namespaced resource is created in a namespace, never through the list across namespaces.
    const creatable = handler.create !== undefined && (namespace !== undefined || !handler.resource.namespaced);
    requireMethod(method, creatable ? ['GET', 'POST'] : ['GET']);
    if (method === 'POST') return sendWritten(res, (handler.create ?? notServed)(req, namespace));
    const scope = { collection: handler.collection, namespace };
    if (isWatch(req.query)) return startWatch(ctx, scope, req.query, res);
    return sendText(res, 200, await list(ctx, scope, req.query));
  }
  if (subresource !== undefined) {
    if (subresource !== 'status' || handler.status === undefined) throw NOT_FOUND();
    requireMethod(method, ['GET', 'PUT', 'PATCH']);
    if (method === 'GET') return sendJson(res, 200, handler.get(namespace, name));
    return sendWritten(res, handler.status(req, name));
  }
  const allowed = ['GET', ...(handler.replace ? ['PUT'] : []), ...(handler.patch ? ['PATCH'] : [])];
  requireMethod(method, [...allowed, ...(handler.delete ? ['DELETE'] : [])]);
  if (method === 'GET') return sendJson(res, 200, handler.get(namespace, name));
  if (method === 'DELETE') return sendJson(res, 200, (handler.delete ?? notServed)(namespace, name));
  if (method === 'PUT') return sendWritten(res, (handler.replace ?? notServed)(req, namespace, name));
  return sendWritten(res, (handler.patch ?? notServed)(req, namespace, name));
}

function notServed(): never {
  throw fail(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
}
