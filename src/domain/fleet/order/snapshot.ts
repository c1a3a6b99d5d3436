/**
 * What the planner is given: the content of the controller's informer caches for one rollout,
 * read from untrusted JSON by the adapter into these plain shapes. Times are milliseconds since
 * the epoch; the planner never reads a clock. Spec and status stay `unknown` here: the planner
 * parses them itself, so a malformed object is a decision (an invalid-spec condition), never a
 * crash.
 */

export type OperationPhase = 'Pending' | 'InProgress' | 'Complete' | 'Failed';

export interface RolloutObject {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  /** Guards the one status update of a plan: a stale cache makes it fail with 409. */
  readonly resourceVersion: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly spec: unknown;
  readonly status: unknown;
}

export interface ReleaseObject {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  readonly spec: unknown;
  readonly status: unknown;
}

export interface NodeFacts {
  readonly name: string;
  readonly uid: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Only the agent-version annotation is read. */
  readonly annotations: Readonly<Record<string, string>>;
  /** The Node's `Ready` condition; absent when it has none. */
  readonly ready?: NodeReady;
}

export interface NodeReady {
  readonly status: 'True' | 'False' | 'Unknown';
  /** Its `lastTransitionTime`, when readable. */
  readonly sinceMs: number | null;
}

/**
 * A kubelet's Lease in `kube-node-lease` (named after its Node): the kubelet renews it every few
 * seconds while it runs, so a renewal after an upgrade proves the node came back.
 */
export interface LeaseFacts {
  readonly name: string;
  readonly renewMs: number | null;
  /** How long a renewal holds (`leaseDurationSeconds`); past it, the node is presumed down. */
  readonly durationMs: number | null;
}

/** A MachineOperation labelled as a child of this rollout. */
export interface ChildOperation {
  readonly name: string;
  readonly machineRef: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The uid of the controlling ownerReference; a child of an older namesake rollout differs. */
  readonly ownerUid: string | null;
  /** `null`: no status yet, the same as Pending. */
  readonly phase: OperationPhase | null;
  /** The reason of the operation's `Completed` condition. */
  readonly reason: string | null;
  readonly message: string | null;
  readonly createdMs: number;
  readonly startedMs: number | null;
  readonly completedMs: number | null;
}

/** An AgentUpgrade operation on a target machine that is not this rollout's. */
export interface ForeignOperation {
  readonly name: string;
  readonly machineRef: string;
  readonly phase: OperationPhase | null;
}

export interface RolloutSnapshot {
  readonly rollout: RolloutObject;
  /** The release `spec.releaseRef` names; `null` when the cache has none. */
  readonly release: ReleaseObject | null;
  /** The release `spec.rollback.releaseRef` names, if any. */
  readonly rollbackRelease: ReleaseObject | null;
  /** Nodes; the planner applies the rollout's selector itself. */
  readonly nodes: readonly NodeFacts[];
  readonly children: readonly ChildOperation[];
  readonly foreignOperations: readonly ForeignOperation[];
  /**
   * The controller verifies releases against signed metadata (docs/rollouts.md#signed-releases):
   * a release is dispatched only when its status says it was verified. Absent: false.
   */
  readonly signedReleasesOnly?: boolean;
  /**
   * The kubelets' Leases by Node name, from the controller's watch of `kube-node-lease`. Absent:
   * the snapshot carries no Node evidence (a planner test about something else), and the Node gate
   * (node-verdict.ts) judges only what the Nodes themselves say.
   */
  readonly leases?: ReadonlyMap<string, LeaseFacts>;
  /**
   * Measurements the controller took for its waves' analyses just before this plan
   * (analysis-run.ts): the planner records them in the status, and decides from the status.
   */
  readonly measurements?: readonly Measurement[];
}

/** One measurement of one metric of a wave's analysis: the `index`-th of that metric. */
export interface Measurement {
  readonly wave: string;
  readonly metric: string;
  readonly index: number;
  readonly atMs: number;
  readonly result: QueryResult;
}

/** An instant query's sample values (a scalar is one), or why there are none, as data. */
export type QueryResult =
  | { readonly ok: true; readonly values: readonly number[] }
  | { readonly ok: false; readonly code: string; readonly message: string };

export function isLivePhase(phase: OperationPhase | null): boolean {
  return phase !== 'Complete' && phase !== 'Failed';
}
