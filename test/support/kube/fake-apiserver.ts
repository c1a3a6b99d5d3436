// A protocol-faithful fake Kubernetes API server on 127.0.0.1 for tests: discovery; Nodes (list,
// watch, get, create, delete, label and annotation merge patch); the cluster-scoped custom
// resources MachineOperation, AgentRelease and AgentRollout (list with paging and field and
// label selectors, watch with replay, selector membership, bookmarks, expiry and timeouts, spec
// and status writes with optimistic concurrency, generation and finalizers), validated, defaulted
// and pruned by the shipped CRDs' schemas and CEL rules (transition rules included: cel.ts lists
// the subset, and a CRD using anything outside it is refused at start); Leases (get, create,
// conditional update); Events (create with the real server's validation, list); Namespaces
// (create, get); plus fault injection and request bookkeeping sized for a simulation of 10,000
// machines. test/contracts/kube-apiserver.contract.ts holds it to what a real kube-apiserver
// answers. Not modelled: garbage collection, server-side apply, managedFields, validation
// ratcheting and CEL cost limits.

import type { JsonObject } from './json.js';
import { type BuiltFake, buildFake } from './fake-parts.js';
import type { FailResponse, KubeRequest, RequestMatcher } from './faults.js';
import type { CustomObject, CustomObjectInput, Lease, MachineOperation, MachineOperationInput, Node } from './types.js';
import type { WatchInfo } from './watch.js';

export type { FailResponse, KubeRequest, RequestMatcher } from './faults.js';
export type { JsonObject, JsonValue } from './json.js';
export type { KubeStatus } from './status.js';
export * from './types.js';
export type { WatchInfo } from './watch.js';
export { isWatch } from './faults.js';

export interface FakeApiServerOptions {
  /**
   * Whether the MachineOperation CRD's `selectableFields: [.spec.machineRef]` is in effect (a server
   * that keeps the stanza: 1.31 and later). Default: as the CRD says.
   */
  readonly selectableFields?: boolean;
  /** Interval between BOOKMARK events on watches that allow them. Default 1000. */
  readonly bookmarkIntervalMs?: number;
  /** The MachineOperation CRD manifest the fake serves. Default deploy/machineoperation-crd.yaml. */
  readonly crdPath?: string;
  /** The AgentRelease CRD manifest. Default deploy/agentrelease-crd.yaml. */
  readonly releaseCrdPath?: string;
  /** The AgentRollout CRD manifest. Default deploy/agentrollout-crd.yaml. */
  readonly rolloutCrdPath?: string;
  /**
   * Bearer tokens the fake accepts; a request without one of them is answered 401, as an
   * authenticating server does. Default: no authentication (every request is served).
   */
  readonly tokens?: readonly string[];
  /** How long a list at a resourceVersion the store has not reached waits before its 504. Default 3000. */
  readonly tooLargeResourceVersionWaitMs?: number;
  /**
   * Whether `requests` keeps each request's body (and statusWrites() each status written). Default
   * true; a long simulation turns it off so bodies do not pile up (method, path, query and
   * headers are still kept).
   */
  readonly recordRequestBodies?: boolean;
  /**
   * How many events each resource's watch log keeps; older ones are compacted away, so a watch
   * from before them is told 410. Default: unlimited.
   */
  readonly historyLimit?: number;
  /** Namespaces that exist besides default, kube-system, kube-public and kube-node-lease. */
  readonly namespaces?: readonly string[];
  /**
   * The clock of server-assigned timestamps (creationTimestamp, deletionTimestamp), in epoch
   * milliseconds, for a simulation on virtual time. Default Date.now. Bookmarks, watch timeouts
   * and the wait for a too-large resourceVersion keep real time.
   */
  readonly now?: () => number;
  /** Server-assigned uids; default random UUIDs. A simulation passes a seeded sequence, to be replayable. */
  readonly uid?: () => string;
}

/** The test's hands on one custom resource. */
export interface CustomResourceApi {
  /**
   * Stores `object` as a POST would (pruned, defaulted and validated by the CRD, ADDED event, new
   * resourceVersion; throws the 422 StatusError for an object a real server refuses); unlike a
   * POST, keeps a given `status` (validated too) so tests can seed any state.
   */
  create(object: CustomObjectInput): CustomObject;
  get(name: string): CustomObject | undefined;
  /** Every object, in name order. */
  list(): CustomObject[];
  /** Deletes as a DELETE would (DELETED event, or only a deletionTimestamp while finalizers remain); throws if absent. */
  delete(name: string): CustomObject;
  /** The status stanzas written through the status subresource for `name`, in order (no-op writes included). */
  statusWrites(name: string): JsonObject[];
}

export interface FakeApiServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;

  /** MachineOperations: operations.create (the `create`, `get`, `delete` and `statusWrites` below are the same). */
  readonly operations: CustomResourceApi;
  readonly releases: CustomResourceApi;
  readonly rollouts: CustomResourceApi;
  create(op: MachineOperationInput): MachineOperation;
  get(name: string): MachineOperation | undefined;
  delete(name: string): MachineOperation;
  statusWrites(name: string): JsonObject[];

  /** Creates or replaces a Node with exactly these labels and annotations (ADDED or MODIFIED event). */
  setNode(name: string, labels: Record<string, string>, annotations?: Record<string, string>): Node;
  /** Deletes a Node (DELETED event); throws if absent. */
  deleteNode(name: string): Node;
  getNode(name: string): Node | undefined;
  lease(namespace: string, name: string): Lease | undefined;
  /** Creates or replaces a Lease with exactly this spec, as a kubelet's renewal would; the namespace must exist. */
  setLease(namespace: string, name: string, spec: Lease['spec']): Lease;
  /** Every Event recorded, by namespace and name. */
  events(): JsonObject[];

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
  openWatches(): WatchInfo[];
  /** Requests received and not yet answered; a watch counts until its response headers are sent. */
  inFlightRequests(): number;
  /** ADDED, MODIFIED and DELETED events (not bookmarks or errors) written to watch streams so far, all told. */
  watchEventsSent(): number;

  /** Idempotent. Destroys every socket, cancels every timer and stops listening. */
  close(): Promise<void>;
}

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const fake: BuiltFake = await buildFake(options);
  const { parts, stores } = fake;
  const clone = <T>(value: T): T => structuredClone(value);
  return {
    origin: fake.origin,
    operations: fake.operations,
    releases: fake.releases,
    rollouts: fake.rollouts,
    create: (op) => fake.operations.create(op),
    get: (name) => fake.operations.get(name),
    delete: (name) => fake.operations.delete(name),
    statusWrites: (name) => fake.operations.statusWrites(name),
    setNode: (name, labels, annotations) => clone(stores.nodes.set(name, labels, annotations)),
    deleteNode: (name) => clone(stores.nodes.delete(name)),
    getNode: (name) => clone(stores.nodes.get(name)),
    lease: (namespace, name) => clone(stores.leases.get(namespace, name)),
    setLease: (namespace, name, spec) => clone(stores.leases.set(namespace, name, spec)),
    events: () =>
      clone(stores.events.objects.page('', undefined, undefined, () => true).items) as unknown as JsonObject[],
    compact: () => stores.store.compact(),
    resourceVersion: () => String(stores.store.currentRv()),
    failNext: (matcher, response) => parts.faults.failNext(matcher, response),
    conflictNext: (times) => parts.faults.conflictNext(times),
    delay: (matcher, ms) => parts.faults.delay(matcher, ms),
    dropWatches: () => {
      for (const w of [...parts.watches]) w.drop();
    },
    silenceWatches: () => {
      for (const w of parts.watches) w.silence();
    },
    requests: parts.requests,
    requestCount: (filter) => parts.requestCount(filter),
    openWatches: () => [...parts.watches].map((w) => w.info),
    inFlightRequests: () => parts.counters.inFlight,
    watchEventsSent: () => parts.counters.watchEventsSent,
    close: () => parts.close(),
  };
}
