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
}

export function isLivePhase(phase: OperationPhase | null): boolean {
  return phase !== 'Complete' && phase !== 'Failed';
}
