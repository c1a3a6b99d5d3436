// What one fake API server is made of and how a request goes through it: the stores and handlers
// of every served resource, the HTTP server on a loopback port, and per request authentication,
// bookkeeping (the request log, the in-flight count), injected faults and delays, then routing.
// fake-apiserver.ts puts the test API in front of it.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  AGENT_RELEASE,
  AGENT_ROLLOUT,
  loadCrd,
  MACHINE_OPERATION,
  RELEASE_CRD,
  ROLLOUT_CRD,
  SHIPPED_CRD,
} from './crd.js';
import type { CustomResourceStore } from './custom-store.js';
import { EventStore } from './events.js';
import type { CustomResourceApi, FakeApiServerOptions } from './fake-apiserver.js';
import { Faults, type KubeRequest, matches, type RequestMatcher } from './faults.js';
import type { JsonObject } from './json.js';
import { LeaseStore } from './leases.js';
import { INITIAL_NAMESPACES, NamespaceStore, NAMESPACES } from './namespaces.js';
import { NodeStore } from './nodes.js';
import {
  customResourceHandler,
  eventHandler,
  handlerKey,
  leaseHandler,
  namespaceHandler,
  nodeHandler,
  type ResourceHandler,
} from './resource-handlers.js';
import { customResource, EVENTS, LEASES, NODES, type ResourceDescriptor } from './resources.js';
import { dispatch, type RouteContext, sendStatus } from './routes.js';
import { failure } from './status.js';
import { KubeStore } from './store.js';
import { Timers } from './timers.js';
import type { WatchStream } from './watch.js';
import { seededInput } from './writes.js';

export interface Stores {
  readonly store: KubeStore;
  readonly nodes: NodeStore;
  readonly namespaces: NamespaceStore;
  readonly leases: LeaseStore;
  readonly events: EventStore;
}

/** Everything one fake holds, shared by the request handler and the test API. */
export class Parts {
  readonly server: Server = createServer();
  readonly timers = new Timers();
  readonly faults = new Faults();
  readonly watches = new Set<WatchStream>();
  readonly sockets = new Set<Socket>();
  readonly requests: KubeRequest[] = [];
  readonly counters = { inFlight: 0, watchEventsSent: 0 };
  /** Set once close() was called. */
  private closing: Promise<void> | undefined;

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Requests by method, so a simulation that asks at every instant does not rescan every request. */
  private readonly countByMethod = new Map<string, number>();

  record(request: KubeRequest, keepBody: boolean): void {
    this.requests.push(keepBody ? request : { ...request, body: undefined });
    const method = request.method.toUpperCase();
    this.countByMethod.set(method, (this.countByMethod.get(method) ?? 0) + 1);
  }

  requestCount(filter?: RequestMatcher): number {
    if (filter === undefined) return this.requests.length;
    if (filter.path === undefined && filter.watch === undefined && filter.method !== undefined)
      return this.countByMethod.get(filter.method.toUpperCase()) ?? 0;
    return this.requests.filter((r) => matches(filter, r)).length;
  }

  /** Idempotent. Destroys every socket, cancels every timer and stops listening. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.timers.clearAll();
      for (const w of this.watches) w.drop();
      this.watches.clear(); // their 'close' events may arrive after close() has resolved
      for (const s of this.sockets) s.destroy();
      this.server.close(() => resolve());
    });
    return this.closing;
  }
}

export interface BuiltFake {
  readonly origin: string;
  readonly parts: Parts;
  readonly stores: Stores;
  readonly operations: CustomResourceApi;
  readonly releases: CustomResourceApi;
  readonly rollouts: CustomResourceApi;
}

function machineOperations(options: FakeApiServerOptions): ResourceDescriptor {
  const crd = loadCrd(options.crdPath ?? SHIPPED_CRD, MACHINE_OPERATION);
  const selectableFields =
    options.selectableFields === false
      ? []
      : options.selectableFields === true && crd.selectableFields.length === 0
        ? ['spec.machineRef']
        : crd.selectableFields;
  return customResource(crd, selectableFields);
}

function customApi(store: CustomResourceStore): CustomResourceApi {
  const clone = <T>(value: T): T => structuredClone(value);
  return {
    create: (object) => clone(store.create(seededInput(store.resource, object as unknown as JsonObject), true)),
    get: (name) => clone(store.get(name)),
    list: () => clone(store.list()),
    delete: (name) => clone(store.delete(name)),
    statusWrites: (name) => store.statusWrites(name),
  };
}

/** Every store, over one KubeStore, with the namespaces that exist from the start. */
function buildStores(options: FakeApiServerOptions): Stores {
  const store = new KubeStore({
    ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
    recordStatusWrites: options.recordRequestBodies ?? true,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.uid === undefined ? {} : { uid: options.uid }),
  });
  const namespaces = new NamespaceStore(store.collection(NAMESPACES), store.timestamp, store.newUid);
  for (const name of new Set([...INITIAL_NAMESPACES, ...(options.namespaces ?? [])])) namespaces.add(name);
  const requireNamespace = (name: string): void => namespaces.require(name);
  return {
    store,
    nodes: new NodeStore(store.collection(NODES), store.timestamp, store.newUid),
    namespaces,
    leases: new LeaseStore(store.collection(LEASES), requireNamespace, store.timestamp, store.newUid),
    events: new EventStore(store.collection(EVENTS), requireNamespace, store.timestamp, store.newUid),
  };
}

export async function buildFake(options: FakeApiServerOptions): Promise<BuiltFake> {
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 1000;
  if (!(bookmarkIntervalMs > 0)) throw new RangeError(`bookmarkIntervalMs must be positive: ${bookmarkIntervalMs}`);
  const operationsResource = machineOperations(options);
  const stores = buildStores(options);
  const [operations, releases, rollouts] = [
    operationsResource,
    customResource(loadCrd(options.releaseCrdPath ?? RELEASE_CRD, AGENT_RELEASE)),
    customResource(loadCrd(options.rolloutCrdPath ?? ROLLOUT_CRD, AGENT_ROLLOUT)),
  ].map((resource) => stores.store.customResources(resource)) as [
    CustomResourceStore,
    CustomResourceStore,
    CustomResourceStore,
  ];
  const parts = new Parts();
  const writeContext = { takeConflict: () => parts.faults.takeConflict() };
  const handlers: ResourceHandler[] = [
    nodeHandler(stores.nodes),
    namespaceHandler(stores.namespaces),
    leaseHandler(stores.leases),
    eventHandler(stores.events),
    ...[operations, releases, rollouts].map((custom) => customResourceHandler(writeContext, custom)),
  ];
  const port = await listenOnLoopback(parts.server, parts.sockets);
  const ctx: RouteContext = {
    clock: stores.store,
    timers: parts.timers,
    watches: parts.watches,
    bookmarkIntervalMs,
    tooLargeResourceVersionWaitMs: options.tooLargeResourceVersionWaitMs ?? 3000,
    onWatchEvent: () => void (parts.counters.watchEventsSent += 1),
    serverAddress: `127.0.0.1:${port}`,
    selectableFields: operationsResource.selectableFields.length > 0,
    handlers: new Map(handlers.map((handler) => [handlerKey(handler.resource), handler])),
  };
  const origin = `http://127.0.0.1:${port}`;
  const tokens = options.tokens === undefined ? undefined : new Set(options.tokens.map((token) => `Bearer ${token}`));
  const answering = { ctx, origin, tokens, recordRequestBodies: options.recordRequestBodies ?? true };
  parts.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(parts, answering, req, res).catch((error: unknown) => {
      sendStatus(res, failure(500, `fake API server: ${error instanceof Error ? error.message : String(error)}`));
    });
  });
  const [mo, rel, rol] = [operations, releases, rollouts].map(customApi) as [
    CustomResourceApi,
    CustomResourceApi,
    CustomResourceApi,
  ];
  return { origin, parts, stores, operations: mo, releases: rel, rollouts: rol };
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

interface Answering {
  readonly ctx: RouteContext;
  readonly origin: string;
  readonly tokens: ReadonlySet<string> | undefined;
  readonly recordRequestBodies: boolean;
}

/** One request, counted in flight until it is answered (a watch: until its headers are sent). */
async function handle(parts: Parts, answering: Answering, req: IncomingMessage, res: ServerResponse): Promise<void> {
  parts.counters.inFlight += 1;
  try {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', answering.origin);
    const record: KubeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    };
    parts.record(record, answering.recordRequestBodies);
    // Authentication comes first on a real server: an unauthenticated request reaches nothing else.
    if (answering.tokens !== undefined && !answering.tokens.has(req.headers.authorization ?? ''))
      return sendStatus(res, failure(401, 'Unauthorized', 'Unauthorized'));
    // Decide on an injected failure at arrival, so faults are consumed in request order even when
    // delays reorder the answers.
    const injected = parts.faults.takeFailure(record);
    const wait = parts.faults.delayFor(record) + (injected?.delayMs ?? 0);
    if (wait > 0) await parts.timers.sleep(wait);
    if (parts.closed || res.destroyed) return;
    if (injected?.retryAfterSeconds !== undefined) {
      const { status, retryAfterSeconds } = injected;
      res.setHeader('Retry-After', String(retryAfterSeconds));
      const details = { retryAfterSeconds };
      return sendStatus(res, failure(status, `injected failure (HTTP ${status})`, undefined, details));
    }
    if (injected !== undefined)
      return sendStatus(res, failure(injected.status, `injected failure (HTTP ${injected.status})`));
    await dispatch(answering.ctx, record, res);
  } finally {
    parts.counters.inFlight -= 1;
  }
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
