// Request routing: discovery, Nodes and the MachineOperation resource with its status subresource.
// Each handler either answers or throws a StatusError, which dispatch() turns into the JSON Status
// answer a real kube-apiserver would give.

import type { ServerResponse } from 'node:http';
import { type CollectionContext, list, startWatch } from './collection.js';
import { discoveryDocument } from './discovery.js';
import type { KubeRequest } from './faults.js';
import { isWatch } from './faults.js';
import { fail, failure, type KubeStatus, StatusError } from './status.js';
import { GROUP, PLURAL, VERSION } from './types.js';
import { createOperation, updateOperation, updateStatus, type WriteContext, type Written } from './writes.js';

export interface RouteContext extends CollectionContext, WriteContext {
  /** host:port, for the `serverAddressByClientCIDRs` of /api. */
  readonly serverAddress: string;
}

const RESOURCE_PATH = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
const OBJECT_PATH = new RegExp(`^${RESOURCE_PATH}/([^/]+)(/status)?$`);

/**
 * `body` is always plain JSON data (objects built from JSON or from the typed shapes in types.ts).
 * `warnings` become `Warning: 299 - "<text>"` headers, one per warning, as kube-apiserver sends them.
 */
export function sendJson(res: ServerResponse, code: number, body: object, warnings: readonly string[] = []): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
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

function sendWritten(res: ServerResponse, written: Written): void {
  sendJson(res, written.code, written.object, written.warnings);
}

async function route(ctx: RouteContext, req: KubeRequest, res: ServerResponse): Promise<void> {
  const { method, path } = req;
  const document = discoveryDocument(path, ctx.serverAddress, ctx.selectableFields.length > 0);
  if (document !== undefined) {
    requireMethod(method, ['GET']);
    return sendJson(res, 200, document);
  }
  if (path.startsWith('/api/v1/nodes')) return routeNodes(ctx, req, res);

  if (path === RESOURCE_PATH) {
    requireMethod(method, ['GET', 'POST']);
    if (method === 'POST') return sendWritten(res, createOperation(ctx, req));
    if (isWatch(req.query)) return startWatch(ctx, req.query, res);
    return sendJson(res, 200, await list(ctx, req.query));
  }
  const object = OBJECT_PATH.exec(path);
  if (object !== null) {
    const name = decodeURIComponent(object[1] ?? '');
    if (object[2] === undefined) {
      requireMethod(method, ['GET', 'PUT', 'PATCH', 'DELETE']);
      if (method === 'DELETE') return sendJson(res, 200, ctx.store.delete(name));
      if (method === 'GET') return sendJson(res, 200, ctx.store.require(name));
      return sendWritten(res, updateOperation(ctx, req, name));
    }
    requireMethod(method, ['GET', 'PUT', 'PATCH']);
    if (method === 'GET') return sendJson(res, 200, ctx.store.require(name));
    return sendWritten(res, updateStatus(ctx, req, name));
  }

  throw fail(404, 'the server could not find the requested resource', 'NotFound');
}

function routeNodes(ctx: RouteContext, req: KubeRequest, res: ServerResponse): void {
  if (req.path === '/api/v1/nodes') {
    requireMethod(req.method, ['GET']);
    const items = ctx.store.listNodes();
    return sendJson(res, 200, {
      apiVersion: 'v1',
      kind: 'NodeList',
      metadata: { resourceVersion: String(ctx.store.currentRv()) },
      items,
    });
  }
  const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(req.path);
  if (node === null) throw fail(404, 'the server could not find the requested resource', 'NotFound');
  requireMethod(req.method, ['GET', 'PATCH']);
  const name = decodeURIComponent(node[1] ?? '');
  const found =
    req.method === 'PATCH' ? ctx.store.annotateNode(name, nodeAnnotationsPatch(req)) : ctx.store.getNode(name);
  if (found === undefined) throw fail(404, `nodes "${name}" not found`, 'NotFound', { name, kind: 'nodes' });
  return sendJson(res, 200, found);
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method))
    throw fail(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
}

/** The daemon's version report: a merge patch of `metadata.annotations` only. */
function nodeAnnotationsPatch(req: KubeRequest): Record<string, string | null> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/merge-patch+json'))
    throw fail(415, 'the body of the request was in an unknown format', 'UnsupportedMediaType');
  const patch = JSON.parse(req.body ?? '{}') as { metadata?: { annotations?: Record<string, string | null> } };
  const keys = Object.keys(patch);
  if (keys.some((key) => key !== 'metadata') || Object.keys(patch.metadata ?? {}).some((key) => key !== 'annotations'))
    throw fail(422, 'the fake accepts only metadata.annotations in a Node patch', 'Invalid');
  return patch.metadata?.annotations ?? {};
}
