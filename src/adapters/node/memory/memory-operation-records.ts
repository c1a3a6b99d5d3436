import type { ClusterErrorCode } from '../../../domain/common/port-errors.js';
import type { ConditionReason, OperationPhase, TerminalStatus } from '../../../ports/node/operation-store.js';

/** What the memory operation store is driven with and what it shows (memory-operation-store.ts). */

export interface ClusterFault {
  /** HTTP status of the refusal (409, 500, …; 403 is answered `forbidden`, 404 on the Node `gone`); `null` is a network error. Default 500. */
  readonly status?: number | null;
  /** The write reached the server but the response was lost: applied, then thrown (retries must be no-ops). */
  readonly afterWrite?: boolean;
  /** The client's own verdict, e.g. `unauthorized` for credentials it keeps seeing refused. */
  readonly code?: ClusterErrorCode;
}

export interface NewOperation {
  readonly name: string;
  /** Default: a deterministic `uid-<n>`. */
  readonly uid?: string;
  /** Default: AgentUpgrade. */
  readonly kind?: string;
  readonly parameters?: Readonly<Record<string, string>>;
  /** Default: null (no status yet), as a freshly created object has. */
  readonly phase?: OperationPhase | null;
}

/** One MachineOperation as the cluster holds it. */
export interface MemoryOperation {
  readonly name: string;
  readonly uid: string;
  readonly kind: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly phase: OperationPhase | null;
  /** Reason of the `Completed` condition. */
  readonly reason: ConditionReason | null;
  readonly message: string | null;
  readonly startedAt: string | null;
  readonly completedAt: string | null;
  /** The condition `Watching`: True while the upgraded agent is in its watch window. */
  readonly watching: boolean;
}

export interface StatusEntry {
  readonly phase: OperationPhase;
  readonly reason: ConditionReason;
  readonly message: string;
}

/**
 * A second, different terminal status for an operation that already had one (docs/protocol.md#i5).
 */
export interface PublishViolation {
  readonly name: string;
  /** Reason and message are null only for an object created already terminal. */
  readonly existing: {
    readonly phase: TerminalStatus['phase'];
    readonly reason: ConditionReason | null;
    readonly message: string | null;
  };
  readonly attempted: TerminalStatus;
}
