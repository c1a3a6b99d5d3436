/**
 * MachineOperation status in the cluster (docs/protocol.md#publication-rules). Writes are
 * merge-patches retried on conflict by the implementation; a deleted operation is `gone`, never an
 * error.
 */
export type OperationPhase = 'Pending' | 'InProgress' | 'Complete' | 'Failed';

export type ConditionReason =
  'InProgress' | 'Succeeded' | 'InvalidParameters' | 'ExecutionFailed' | 'Untrusted' | 'DaemonFailed';

export interface OperationRef {
  readonly name: string;
  readonly uid: string | null;
}

export interface AgentUpgradeRequest {
  readonly operation: OperationRef;
  readonly phase: OperationPhase | null;
  readonly parameters: Readonly<Record<string, string>>;
}

export interface TerminalStatus {
  readonly phase: 'Complete' | 'Failed';
  readonly reason: Exclude<ConditionReason, 'InProgress'>;
  /** Redacted. */
  readonly message: string;
}

export type StatusWrite =
  | { readonly kind: 'written' }
  | { readonly kind: 'gone' }
  /**
   * This identity may not write the operation's status (403): an admission policy lets a node
   * report only on operations whose `machineRef` names it, so a selector-targeted one is refused.
   */
  | { readonly kind: 'forbidden' };

/**
 * The answer to a version report: `gone` when this machine has no Node object, `forbidden` when
 * this identity may not write it. Neither is retried: nothing changes them but the cluster.
 */
export type VersionReportWrite = 'written' | 'forbidden' | 'gone';

export interface OperationStore {
  /**
   * Marks the operation InProgress (no-op when it is already terminal). `watching`: the upgraded
   * agent passed its health gate and is in its watch window (the condition `Watching` is True
   * until the terminal status, which sets it False).
   */
  markInProgress(
    operation: OperationRef,
    message: string,
    options?: { readonly watching?: boolean },
  ): Promise<StatusWrite>;
  /** Publishes a terminal status. Publishing the same terminal status again is a no-op. */
  publish(operation: OperationRef, status: TerminalStatus): Promise<StatusWrite>;
  /**
   * The operation as the cluster has it now, or `null` once it is gone (deleted, or re-created
   * under the same name): what a requeued operation is handled as.
   */
  read(operation: OperationRef): Promise<AgentUpgradeRequest | null>;
  /** Operations of kind AgentUpgrade addressed to this machine, as they arrive. */
  watch(signal: AbortSignal): AsyncIterable<AgentUpgradeRequest>;
  /**
   * Writes the agent version this machine runs (`1.2.3`, as the domain formats it) where a rollout
   * controller reads it: the `agent-upgrade.dev/agent-version` annotation of this machine's Node
   * (docs/operations.md#what-the-daemon-writes-to-its-node), with the trusted metadata of signed
   * releases beside it (`agent-upgrade.dev/trusted-metadata`, removed when null). Writing the
   * values it already has is harmless; any other failure throws.
   */
  reportAgentVersion(version: string, trustedMetadata: string | null): Promise<VersionReportWrite>;
}
