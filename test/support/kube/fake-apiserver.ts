// A protocol-faithful fake Kubernetes API server on 127.0.0.1 for tests: discovery, Nodes and the
// cluster-scoped MachineOperation resource (list with paging and field selectors, watch with
// replay, bookmarks, expiry and timeouts, status subresource with optimistic concurrency), plus
// fault injection and request bookkeeping.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Faults, type FailResponse, isWatch, type KubeRequest, matches, type RequestMatcher } from './faults.js';
import type { JsonObject } from './json.js';
import { dispatch, type RouteContext, sendStatus } from './routes.js';
import { failure } from './status.js';
import { KubeStore } from './store.js';
import { Timers } from './timers.js';
import type { MachineOperation, MachineOperationInput, Node } from './types.js';
import type { WatchInfo, WatchStream } from './watch.js';

export type { FailResponse, KubeRequest, RequestMatcher } from './faults.js';
export type { JsonObject, JsonValue } from './json.js';
export type { KubeStatus } from './status.js';
export * from './types.js';
export type { WatchInfo } from './watch.js';

export interface FakeApiServerOptions {
  /** Whether the CRD's `selectableFields: [.spec.machineRef]` is in effect (Kubernetes ≥ 1.31). Default true. */
  readonly selectableFields?: boolean;
  /** Interval between BOOKMARK events on watches that allow them. Default 1000. */
  readonly bookmarkIntervalMs?: number;
}

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;

  /** Stores `op` as a POST would (ADDED event, new resourceVersion); unlike a POST, keeps a given `status` so tests can seed any phase. */
  create(op: MachineOperationInput): MachineOperation;
  get(name: string): MachineOperation | undefined;
  /** Deletes as a DELETE would (DELETED event); throws if absent. */
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

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const selectableFields = options.selectableFields ?? true;
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 1000;
  if (!(bookmarkIntervalMs > 0)) throw new RangeError(`bookmarkIntervalMs must be positive: ${bookmarkIntervalMs}`);

  const server = createServer();
  const store = new KubeStore();
  const timers = new Timers();
  const faults = new Faults();
  const watches = new Set<WatchStream>();
  const sockets = new Set<Socket>();
  const requests: KubeRequest[] = [];
  let closing: Promise<void> | undefined;

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
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const ctx: RouteContext = {
    store,
    timers,
    selectableFields,
    bookmarkIntervalMs,
    serverAddress: `127.0.0.1:${port}`,
    takeConflict: () => faults.takeConflict(),
    watches,
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', origin);
    const record: KubeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    };
    requests.push(record);
    // Decide on an injected failure at arrival, so faults are consumed in request order even when
    // delays reorder the answers.
    const injected = faults.takeFailure(record);
    const wait = faults.delayFor(record) + (injected?.delayMs ?? 0);
    if (wait > 0) await timers.sleep(wait);
    if (closing !== undefined || res.destroyed) return;
    if (injected !== undefined)
      return sendStatus(res, failure(injected.status, `injected failure (HTTP ${injected.status})`));
    dispatch(ctx, record, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      sendStatus(res, failure(500, `fake API server: ${error instanceof Error ? error.message : String(error)}`));
    });
  });

  return {
    origin,
    create: (op) => store.create(op, true),
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
      closing ??= new Promise<void>((resolve) => {
        timers.clearAll();
        for (const w of watches) w.drop();
        watches.clear(); // their 'close' events may arrive after close() has resolved
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closing;
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
