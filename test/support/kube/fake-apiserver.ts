// A protocol-faithful fake Kubernetes API server on 127.0.0.1 for tests: discovery, Nodes and the
// cluster-scoped MachineOperation resource (list with paging and field selectors, watch with
// replay, selector membership, bookmarks, expiry and timeouts, spec and status writes with
// optimistic concurrency, generation and finalizers), validated and pruned by the shipped CRD's
// schema, plus fault injection and request bookkeeping. test/contracts/kube-apiserver.contract.ts
// holds it to what a real kube-apiserver answers.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type CrdModel, loadCrd, SHIPPED_CRD } from './crd.js';
import { Faults, type FailResponse, isWatch, type KubeRequest, matches, type RequestMatcher } from './faults.js';
import type { JsonObject } from './json.js';
import { dispatch, type RouteContext, sendStatus } from './routes.js';
import { failure } from './status.js';
import { KubeStore } from './store.js';
import { Timers } from './timers.js';
import type { MachineOperation, MachineOperationInput, Node } from './types.js';
import type { WatchInfo, WatchStream } from './watch.js';
import { seededInput } from './writes.js';

export type { FailResponse, KubeRequest, RequestMatcher } from './faults.js';
export type { JsonObject, JsonValue } from './json.js';
export type { KubeStatus } from './status.js';
export * from './types.js';
export type { WatchInfo } from './watch.js';

export interface FakeApiServerOptions {
  /**
   * Whether the CRD's `selectableFields: [.spec.machineRef]` is in effect (a server that keeps the
   * stanza: 1.31 and later). Default: as the CRD says.
   */
  readonly selectableFields?: boolean;
  /** Interval between BOOKMARK events on watches that allow them. Default 1000. */
  readonly bookmarkIntervalMs?: number;
  /** The CRD manifest whose schema and selectable fields the fake serves. Default deploy/machineoperation-crd.yaml. */
  readonly crdPath?: string;
  /**
   * Bearer tokens the fake accepts; a request without one of them is answered 401, as an
   * authenticating server does. Default: no authentication (every request is served).
   */
  readonly tokens?: readonly string[];
  /** How long a list at a resourceVersion the store has not reached waits before its 504. Default 3000. */
  readonly tooLargeResourceVersionWaitMs?: number;
}

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;

  /**
   * Stores `op` as a POST would (pruned and validated by the CRD's schema, ADDED event, new
   * resourceVersion; throws the 422 StatusError for an object a real server refuses); unlike a
   * POST, keeps a given `status` (validated too) so tests can seed any phase.
   */
  create(op: MachineOperationInput): MachineOperation;
  get(name: string): MachineOperation | undefined;
  /** Deletes as a DELETE would (DELETED event, or only a deletionTimestamp while finalizers remain); throws if absent. */
  delete(name: string): MachineOperation;
  /** Creates or replaces a Node with these labels (bumps the global resourceVersion, no MachineOperation event). */
  setNode(name: string, labels: Record<string, string>): Node;
  /** Every resourceVersion up to now becomes "too old": watches from it get an ERROR 410 event. */
  compact(): void;
  /** The current global resourceVersion. */
  resourceVersion(): string;

  /** Answers the next `times` (default 1) matching requests with a Status error of `status`. */
  failNext(matcher: RequestMatcher, response: FailResponse): void;
  /** The next `times` status PUT/PATCH requests (that pass validation) are answered 409 Conflict. */
  conflictNext(times: number): void;
  /** Holds every matching request `ms` before handling it, until the returned function is called. */
  delay(matcher: RequestMatcher, ms: number): () => void;
  /** Destroys every open watch connection mid-stream. */
  dropWatches(): void;
  /** Open watches stay connected but receive nothing more (no events, bookmarks or timeout end). */
  silenceWatches(): void;

  /** Every request received, in arrival order (including those answered by injected faults). */
  readonly requests: readonly KubeRequest[];
  requestCount(filter?: RequestMatcher): number;
  /** The status stanzas written through the status subresource for `name`, in order (no-op writes included). */
  statusWrites(name: string): JsonObject[];
  openWatches(): WatchInfo[];

  /** Idempotent. Destroys every socket, cancels every timer and stops listening. */
  close(): Promise<void>;
}

/** Everything one fake holds; shared by the request handler and the test API. */
interface Parts {
  readonly server: Server;
  readonly crd: CrdModel;
  readonly store: KubeStore;
  readonly timers: Timers;
  readonly faults: Faults;
  readonly watches: Set<WatchStream>;
  readonly sockets: Set<Socket>;
  readonly requests: KubeRequest[];
  /** Set once close() was called. */
  closing: Promise<void> | undefined;
}

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const crd = loadCrd(options.crdPath ?? SHIPPED_CRD);
  const selectableFields =
    options.selectableFields === false
      ? []
      : options.selectableFields === true && crd.selectableFields.length === 0
        ? ['spec.machineRef']
        : crd.selectableFields;
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 1000;
  if (!(bookmarkIntervalMs > 0)) throw new RangeError(`bookmarkIntervalMs must be positive: ${bookmarkIntervalMs}`);
  const parts: Parts = {
    server: createServer(),
    crd,
    store: new KubeStore(),
    timers: new Timers(),
    faults: new Faults(),
    watches: new Set(),
    sockets: new Set(),
    requests: [],
    closing: undefined,
  };
  const port = await listenOnLoopback(parts.server, parts.sockets);
  const ctx: RouteContext = {
    ...parts,
    selectableFields,
    bookmarkIntervalMs,
    tooLargeResourceVersionWaitMs: options.tooLargeResourceVersionWaitMs ?? 3000,
    serverAddress: `127.0.0.1:${port}`,
    takeConflict: () => parts.faults.takeConflict(),
  };
  const origin = `http://127.0.0.1:${port}`;
  const tokens = options.tokens === undefined ? undefined : new Set(options.tokens.map((token) => `Bearer ${token}`));
  parts.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(parts, ctx, origin, tokens, req, res).catch((error: unknown) => {
      sendStatus(res, failure(500, `fake API server: ${error instanceof Error ? error.message : String(error)}`));
    });
  });
  return testApi(parts, origin);
}

/** Listens on a kernel-chosen loopback port, tracking sockets so close() can destroy them. */
async function listenOnLoopback(server: Server, sockets: Set<Socket>): Promise<number> {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that hangs up mid-request must not surface as an unhandled error in the test run.
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

async function handle(
  parts: Parts,
  ctx: RouteContext,
  origin: string,
  tokens: ReadonlySet<string> | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readBody(req);
  const url = new URL(req.url ?? '/', origin);
  const record: KubeRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    body,
  };
  parts.requests.push(record);
  // Authentication comes first on a real server: an unauthenticated request reaches nothing else.
  if (tokens !== undefined && !tokens.has(req.headers.authorization ?? ''))
    return sendStatus(res, failure(401, 'Unauthorized', 'Unauthorized'));
  // Decide on an injected failure at arrival, so faults are consumed in request order even when
  // delays reorder the answers.
  const injected = parts.faults.takeFailure(record);
  const wait = parts.faults.delayFor(record) + (injected?.delayMs ?? 0);
  if (wait > 0) await parts.timers.sleep(wait);
  if (parts.closing !== undefined || res.destroyed) return;
  if (injected !== undefined)
    return sendStatus(res, failure(injected.status, `injected failure (HTTP ${injected.status})`));
  await dispatch(ctx, record, res);
}

function testApi(parts: Parts, origin: string): FakeApiServer {
  const { store, faults, watches, requests } = parts;
  return {
    origin,
    create: (op) => store.create(seededInput(parts.crd, op as unknown as JsonObject), true),
    get: (name) => store.get(name),
    delete: (name) => store.delete(name),
    setNode: (name, labels) => store.setNode(name, labels),
    compact: () => store.compact(),
    resourceVersion: () => String(store.currentRv()),
    failNext: (matcher, response) => faults.failNext(matcher, response),
    conflictNext: (times) => faults.conflictNext(times),
    delay: (matcher, ms) => faults.delay(matcher, ms),
    dropWatches: () => {
      for (const w of [...watches]) w.drop();
    },
    silenceWatches: () => {
      for (const w of watches) w.silence();
    },
    requests,
    requestCount: (filter) =>
      filter === undefined ? requests.length : requests.filter((r) => matches(filter, r)).length,
    statusWrites: (name) => store.statusWrites(name),
    openWatches: () => [...watches].map((w) => w.info),
    close: () => {
      parts.closing ??= new Promise<void>((resolve) => {
        parts.timers.clearAll();
        for (const w of watches) w.drop();
        watches.clear(); // their 'close' events may arrive after close() has resolved
        for (const s of parts.sockets) s.destroy();
        parts.server.close(() => resolve());
      });
      return parts.closing;
    },
  };
}

/** Collects the body as UTF-8; undefined when empty (GET, DELETE without options). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    // An aborted upload never ends; settle anyway (the handler then sees the response destroyed).
    req.on('close', () => resolve(undefined));
  });
}

// Re-exported so tests can tell watch requests apart in `requests` without re-implementing it.
export { isWatch };
