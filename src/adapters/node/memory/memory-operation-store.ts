import { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type {
  AgentUpgradeRequest,
  OperationPhase,
  OperationRef,
  OperationStore,
  StatusWrite,
  TerminalStatus,
  VersionReportWrite,
} from '../../../ports/node/operation-store.js';
import type {
  ClusterFault,
  MemoryOperation,
  NewOperation,
  PublishViolation,
  StatusEntry,
} from './memory-operation-records.js';

export const AGENT_UPGRADE_KIND = 'AgentUpgrade';

export type OperationStoreMethod = 'markInProgress' | 'publish' | 'read' | 'watch' | 'reportAgentVersion';

export type {
  ClusterFault,
  MemoryOperation,
  NewOperation,
  PublishViolation,
  StatusEntry,
} from './memory-operation-records.js';

/**
 * MachineOperations in memory, for simulations. It behaves as the cluster would towards one
 * daemon, and it is also the judge of I5 (docs/protocol.md#i5): every applied status write is kept
 * in `history`, and an attempt to replace a terminal status with a different one is refused and
 * recorded in `violations` instead of silently overwriting it. Faults are queued per method and
 * thrown as ClusterError; `requestCount` counts every call, failed or not, for request-budget
 * checks.
 */
export class MemoryOperationStore implements OperationStore {
  private readonly operations = new Map<string, MemoryOperation>();
  /** Append-only creation order: `watch` replays it, then follows it. */
  private readonly created: { readonly name: string; readonly uid: string }[] = [];
  private readonly histories = new Map<string, StatusEntry[]>();
  private readonly terminalCounts = new Map<string, number>();
  private readonly faults = new Map<OperationStoreMethod, ClusterFault[]>();
  private readonly counts: Record<OperationStoreMethod, number> = {
    markInProgress: 0,
    publish: 0,
    read: 0,
    watch: 0,
    reportAgentVersion: 0,
  };
  private readonly waiters = new Set<() => void>();
  private uidCounter = 0;
  readonly violations: PublishViolation[] = [];
  /** Every agent version written to this machine's Node, in order; the last is what it shows. */
  readonly versionReports: string[] = [];
  /** The trusted-metadata annotation written with each of them (null: removed). */
  readonly trustedMetadataReports: (string | null)[] = [];

  constructor(private readonly options: { readonly clock?: Clock } = {}) {}

  // ---- the cluster side (tests and simulations) ----

  create(input: NewOperation): OperationRef {
    if (this.operations.has(input.name)) throw new ClusterError(409, `${input.name} already exists`);
    this.uidCounter += 1;
    const operation: MemoryOperation = {
      name: input.name,
      uid: input.uid ?? `uid-${this.uidCounter}`,
      kind: input.kind ?? AGENT_UPGRADE_KIND,
      parameters: { ...(input.parameters ?? {}) },
      phase: input.phase ?? null,
      reason: null,
      message: null,
      startedAt: null,
      completedAt: null,
      watching: false,
    };
    this.operations.set(operation.name, operation);
    this.created.push({ name: operation.name, uid: operation.uid });
    for (const wake of [...this.waiters]) wake();
    return { name: operation.name, uid: operation.uid };
  }

  delete(name: string): void {
    this.operations.delete(name);
  }

  get(name: string): MemoryOperation | null {
    return this.operations.get(name) ?? null;
  }

  /** Every applied status write of `name`, in order (kept after deletion). */
  history(name: string): readonly StatusEntry[] {
    return [...(this.histories.get(name) ?? [])];
  }

  /** How many writes moved `name` into a terminal status: I5 wants exactly one. */
  terminalWrites(name: string): number {
    return this.terminalCounts.get(name) ?? 0;
  }

  get requestCount(): Readonly<Record<OperationStoreMethod, number>> {
    return { ...this.counts };
  }

  failNext(method: OperationStoreMethod, fault: ClusterFault = {}): void {
    this.failTimes(method, 1, fault);
  }

  failTimes(method: OperationStoreMethod, times: number, fault: ClusterFault = {}): void {
    const queue = this.faults.get(method) ?? [];
    for (let index = 0; index < times; index += 1) queue.push(fault);
    this.faults.set(method, queue);
  }

  /** The cluster recovers: pending injected faults are dropped. */
  clearFaults(method?: OperationStoreMethod): void {
    if (method === undefined) this.faults.clear();
    else this.faults.delete(method);
  }

  // ---- the port ----

  async markInProgress(
    ref: OperationRef,
    message: string,
    options: { readonly watching?: boolean } = {},
  ): Promise<StatusWrite> {
    return this.request(
      'markInProgress',
      (operation) => {
        if (isTerminal(operation.phase)) return; // the contract: a no-op once terminal
        this.apply(
          operation,
          { phase: 'InProgress', reason: 'InProgress', message },
          { startedAt: operation.startedAt ?? this.timestamp(), watching: options.watching === true },
        );
      },
      ref,
    );
  }

  async publish(ref: OperationRef, status: TerminalStatus): Promise<StatusWrite> {
    return this.request(
      'publish',
      (operation) => {
        if (isTerminal(operation.phase)) {
          const same =
            operation.phase === status.phase &&
            operation.reason === status.reason &&
            operation.message === status.message;
          const existing = { phase: operation.phase, reason: operation.reason, message: operation.message };
          if (!same) this.violations.push({ name: operation.name, existing, attempted: status });
          return;
        }
        this.apply(
          operation,
          { phase: status.phase, reason: status.reason, message: status.message },
          { completedAt: this.timestamp(), watching: false },
        );
      },
      ref,
    );
  }

  async read(ref: OperationRef): Promise<AgentUpgradeRequest | null> {
    this.counts.read += 1;
    const operation = this.operations.get(ref.name);
    if (operation === undefined || (ref.uid !== null && operation.uid !== ref.uid)) return null;
    return {
      operation: { name: operation.name, uid: operation.uid },
      phase: operation.phase,
      parameters: operation.parameters,
    };
  }

  async *watch(signal: AbortSignal): AsyncGenerator<AgentUpgradeRequest> {
    const fault = this.takeFault('watch');
    if (fault !== undefined) throw clusterError('watch', fault);
    let cursor = 0;
    while (!signal.aborted) {
      while (cursor < this.created.length && !signal.aborted) {
        const entry = this.created[cursor];
        cursor += 1;
        // Judged now, not at creation: one deleted or finished meanwhile is not work any more.
        const operation = entry === undefined ? undefined : this.operations.get(entry.name);
        if (operation === undefined || operation.uid !== entry?.uid || operation.kind !== AGENT_UPGRADE_KIND) continue;
        if (operation.phase !== null && operation.phase !== 'Pending') continue;
        yield {
          operation: { name: operation.name, uid: operation.uid },
          phase: operation.phase,
          parameters: operation.parameters,
        };
      }
      if (!signal.aborted) await this.nextCreation(signal);
    }
  }

  async reportAgentVersion(version: string, trustedMetadata: string | null): Promise<VersionReportWrite> {
    const fault = this.takeFault('reportAgentVersion');
    if (fault?.status === 403) return 'forbidden';
    if (fault?.status === 404) return 'gone';
    if (fault !== undefined && fault.afterWrite !== true) throw clusterError('reportAgentVersion', fault);
    this.versionReports.push(version);
    this.trustedMetadataReports.push(trustedMetadata);
    if (fault !== undefined) throw clusterError('reportAgentVersion', fault);
    return 'written';
  }

  // ---- internals ----

  /** Counts the call, throws an injected fault (before or after `write`), and resolves the ref. */
  private request(
    method: OperationStoreMethod,
    write: (operation: MemoryOperation) => void,
    ref: OperationRef,
  ): StatusWrite {
    const fault = this.takeFault(method);
    // A refused identity is an answer, not a failure: nothing is written.
    if (fault?.status === 403) return { kind: 'forbidden' };
    if (fault !== undefined && fault.afterWrite !== true) throw clusterError(method, fault);
    const operation = this.operations.get(ref.name);
    // A uid mismatch is a deleted and re-created object: the one we were asked about is gone.
    const found = operation !== undefined && (ref.uid === null || ref.uid === operation.uid) ? operation : undefined;
    if (found !== undefined) write(found);
    if (fault !== undefined) throw clusterError(method, fault);
    return found === undefined ? { kind: 'gone' } : { kind: 'written' };
  }

  private takeFault(method: OperationStoreMethod): ClusterFault | undefined {
    this.counts[method] += 1;
    return this.faults.get(method)?.shift();
  }

  private apply(
    operation: MemoryOperation,
    entry: StatusEntry,
    times: Partial<Pick<MemoryOperation, 'startedAt' | 'completedAt' | 'watching'>>,
  ): void {
    this.operations.set(operation.name, { ...operation, ...entry, ...times });
    const history = this.histories.get(operation.name) ?? [];
    history.push(entry);
    this.histories.set(operation.name, history);
    if (isTerminal(entry.phase) && !isTerminal(operation.phase)) {
      this.terminalCounts.set(operation.name, this.terminalWrites(operation.name) + 1);
    }
  }

  private nextCreation(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  private timestamp(): string {
    // Without a clock the epoch keeps timestamps deterministic rather than wall-clock.
    return new Date(this.options.clock?.nowMs() ?? 0).toISOString();
  }
}

function isTerminal(phase: OperationPhase | null): phase is TerminalStatus['phase'] {
  return phase === 'Complete' || phase === 'Failed';
}

function clusterError(method: OperationStoreMethod, fault: ClusterFault): ClusterError {
  const status = fault.status === undefined ? 500 : fault.status;
  const message = `${method} failed (injected${status === null ? ', network' : `, HTTP ${status}`})`;
  return new ClusterError(status, message, fault.code);
}
