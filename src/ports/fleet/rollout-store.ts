import type { RolloutState } from '../../domain/fleet/spec/rollout-spec.js';

/**
 * AgentRollouts and AgentReleases in the cluster, as an operator reads and steers them
 * (docs/rollouts.md#the-operator-cli): objects read whole, and merge-patches of the few fields an
 * operator changes, each guarded by the resourceVersion it was read at. Failures to reach or be
 * answered by the cluster are ClusterErrors; a missing object and a stale resourceVersion are
 * answers, not errors.
 */
export interface RolloutObject {
  readonly name: string;
  readonly resourceVersion: string;
  readonly generation: number | null;
  /** `metadata.annotations` (string values only); the approval of a manual gate is one. */
  readonly annotations: Readonly<Record<string, string>>;
  /** `metadata.creationTimestamp`, or `null` when the server gave none. */
  readonly createdAt: string | null;
  /** The spec as stored (untrusted JSON; the API server applied its defaults). */
  readonly spec: Readonly<Record<string, unknown>>;
  /** The status as stored, or `null` before the controller first wrote one. */
  readonly status: unknown;
}

export interface RolloutSpecPatch {
  readonly state?: RolloutState;
  readonly resumeFromHalt?: string;
}

export type RolloutPatchOutcome =
  | { readonly kind: 'patched'; readonly rollout: RolloutObject }
  /** The object changed since it was read (409): read it again and decide again. */
  | { readonly kind: 'conflict' }
  | { readonly kind: 'not-found' };

/** An AgentRelease as read: only its quarantine is ever written by an operator command. */
export interface ReleaseObject {
  readonly name: string;
  readonly resourceVersion: string;
  /** The spec as stored (untrusted JSON). */
  readonly spec: Readonly<Record<string, unknown>>;
}

/** `spec.quarantine` of an AgentRelease, as a person sets or lifts it. */
export interface ReleaseQuarantine {
  readonly quarantined: boolean;
  readonly reason: string;
}

export type ReleasePatchOutcome =
  | { readonly kind: 'patched'; readonly release: ReleaseObject }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'not-found' };

export interface RolloutStore {
  /** The rollout, or `null` when there is none of that name. */
  get(name: string): Promise<RolloutObject | null>;
  /** Every rollout (they are cluster-scoped), sorted by name. */
  list(): Promise<readonly RolloutObject[]>;
  /** Sets the given spec fields, only if the object is still at `resourceVersion`. */
  patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome>;
  /** Sets the given annotations (others are kept), only if the object is still at `resourceVersion`. */
  annotate(
    name: string,
    resourceVersion: string,
    annotations: Readonly<Record<string, string>>,
  ): Promise<RolloutPatchOutcome>;
  /** The release, or `null` when there is none of that name. */
  getRelease(name: string): Promise<ReleaseObject | null>;
  /** Replaces `spec.quarantine`, only if the release is still at `resourceVersion`. */
  quarantineRelease(name: string, resourceVersion: string, quarantine: ReleaseQuarantine): Promise<ReleasePatchOutcome>;
  /** Lets go of its connections; the store is not used afterwards. */
  close(): void;
}

/** Opens the store (connects to the cluster) on first use; the CLI opens it once per command. */
export type RolloutStoreFactory = () => Promise<RolloutStore>;
