import type { RolloutState } from '../../domain/fleet/spec/rollout-spec.js';

/**
 * AgentRollouts in the cluster, as an operator reads and steers them (docs/rollouts.md): one
 * object read whole, and a merge-patch of the two spec fields an operator changes, guarded by the
 * resourceVersion it was read at. Failures to reach or be answered by the cluster are
 * ClusterErrors; a missing object and a stale resourceVersion are answers, not errors.
 */
export interface RolloutObject {
  readonly name: string;
  readonly resourceVersion: string;
  readonly generation: number | null;
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

export interface RolloutStore {
  /** The rollout, or `null` when there is none of that name. */
  get(name: string): Promise<RolloutObject | null>;
  /** Sets the given spec fields, only if the object is still at `resourceVersion`. */
  patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome>;
  /** Lets go of its connections; the store is not used afterwards. */
  close(): void;
}

/** Opens the store (connects to the cluster) on first use; the CLI opens it once per command. */
export type RolloutStoreFactory = () => Promise<RolloutStore>;
