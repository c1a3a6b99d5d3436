import type { RolloutEvent } from '../../domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../domain/fleet/decide/child-manifest.js';
import type { AgentReleaseStatus } from '../../domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../domain/fleet/status/rollout-status.js';
import type {
  ChildOperation,
  LeaseFacts,
  NodeFacts,
  ReleaseObject,
  RolloutObject,
} from '../../domain/fleet/order/snapshot.js';

/**
 * The cluster as the rollout controller sees it: five informers (list, then watch; every read
 * the controller makes comes from them) and the few writes a plan asks for. The adapter reads
 * the API server's untrusted JSON into the planner's plain shapes; a failure to reach or be
 * answered by the cluster is a ClusterError, while a stale resourceVersion, an existing object
 * or a missing one are answers.
 */

/**
 * Every AgentUpgrade MachineOperation, whoever made it, read as the planner reads a child: the
 * controller tells its children from the rest by label and owner.
 */
export interface OperationFacts extends ChildOperation {
  readonly uid: string;
}

export interface ResourceShapes {
  readonly nodes: NodeFacts;
  readonly releases: ReleaseObject;
  readonly rollouts: RolloutObject;
  readonly operations: OperationFacts;
  /** The kubelets' Leases in `kube-node-lease`, for the Node gate. */
  readonly leases: LeaseFacts;
}

export type ResourceKind = keyof ResourceShapes;

/**
 * What an informer delivers. `replace` is the whole collection after a (re)list: whatever the
 * cache held that is not in it is gone. `upsert` and `delete` follow from the watch.
 */
export type InformerEvent<K extends ResourceKind = ResourceKind> = K extends ResourceKind
  ? | { readonly type: 'replace'; readonly kind: K; readonly objects: readonly ResourceShapes[K][] }
    | { readonly type: 'upsert'; readonly kind: K; readonly object: ResourceShapes[K] }
    | { readonly type: 'delete'; readonly kind: K; readonly name: string }
  : never;

/**
 * Client-side pacing of a controller's writes, as client-go's token bucket paces
 * kube-controller-manager's: `qps` tokens a second, at most `burst` saved up. `null` where a
 * pacing is expected means no client-side limit (a 429's Retry-After still pauses the writes).
 */
export interface WritePacing {
  readonly qps: number;
  readonly burst: number;
}

export type StatusUpdateOutcome = 'updated' | 'conflict' | 'not-found';
export type CreateOutcome = 'created' | 'exists';

export interface ControllerCluster {
  /**
   * Starts the five informers; `onEvent` receives every change in order, per kind. Runs until
   * `signal` aborts; rejects only with a ClusterError the informers cannot recover from (the
   * credentials keep being refused).
   */
  inform(onEvent: (event: InformerEvent) => void, signal: AbortSignal): Promise<void>;
  /** A PUT of the status subresource carrying `resourceVersion`: 409 when the rollout changed since. */
  updateRolloutStatus(name: string, resourceVersion: string, status: AgentRolloutStatus): Promise<StatusUpdateOutcome>;
  /** A PUT of the release's status subresource, guarded the same way. */
  updateReleaseStatus(name: string, resourceVersion: string, status: AgentReleaseStatus): Promise<StatusUpdateOutcome>;
  /** A merge patch of the release's `spec.quarantine`; `false` when the release is gone. */
  quarantineRelease(name: string, quarantine: { quarantined: true; reason: string }): Promise<boolean>;
  createOperation(operation: MachineOperationManifest): Promise<CreateOutcome>;
  /** An Event about the rollout or release, in the controller's namespace. */
  recordEvent(event: RolloutEvent, atMs: number): Promise<void>;
  close(): void;
}

/** A `coordination.k8s.io/v1` Lease as leader election reads and writes it. */
export interface LeaseRecord {
  readonly holder: string;
  readonly leaseDurationSeconds: number;
  readonly acquireMs: number;
  readonly renewMs: number;
  readonly transitions: number;
}

export interface StoredLease {
  readonly resourceVersion: string;
  readonly lease: LeaseRecord;
}

export type LeaseWriteOutcome =
  | { readonly kind: 'written'; readonly lease: StoredLease }
  /** Someone else wrote first (409 on update, AlreadyExists on create). */
  | { readonly kind: 'conflict' };

export interface LeaseStore {
  get(): Promise<StoredLease | null>;
  create(lease: LeaseRecord): Promise<LeaseWriteOutcome>;
  update(resourceVersion: string, lease: LeaseRecord): Promise<LeaseWriteOutcome>;
}
