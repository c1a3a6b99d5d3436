import type { AgentRolloutStatus } from '../../domain/fleet/status/rollout-status.js';

/** What an API request was, for the requests-by-verb counter. */
export interface ApiRequestSample {
  readonly verb: 'list' | 'watch' | 'get' | 'create' | 'update' | 'patch' | 'delete';
  /** The plural resource name: `agentrollouts`, `machineoperations`, `leases`, `events`, `nodes`, … */
  readonly resource: string;
  /** The HTTP status; `null` when no answer came (a transport failure). */
  readonly code: number | null;
}

/** One role of the trusted metadata, after the controller verified a release against it. */
export interface TrustRoleExpiry {
  readonly role: string;
  /** When its signed metadata expires; `null` when the signed date cannot be read. */
  readonly expiresMs: number | null;
  /** Within the warning window (a week), or already expired, or unreadable. */
  readonly expiringSoon: boolean;
}

/**
 * The controller's Prometheus metrics, as the app reports them. Implementations keep only the
 * latest value per rollout (gauges) and running totals (counters); they never fail the caller.
 */
export interface ControllerMetrics {
  /** The machines of a rollout by state, its failures by reason and its phase, from the status it wrote. */
  rolloutObserved(name: string, status: AgentRolloutStatus): void;
  /** The rollout is gone: its series are dropped. */
  rolloutForgotten(name: string): void;
  /** A rollout entered Halted (counted once per halt id). */
  halted(name: string, reason: string): void;
  /** One reconcile of one rollout, from the snapshot to the last action. */
  reconciled(durationMs: number, outcome: 'applied' | 'conflict' | 'error'): void;
  apiRequest(sample: ApiRequestSample): void;
  /** Whether this replica holds the leader Lease; one that stops leading drops every rollout's series. */
  leading(isLeader: boolean): void;
  /** The trusted metadata's roles as last verified (signed releases only). */
  trustMetadataObserved(roles: readonly TrustRoleExpiry[]): void;
}
