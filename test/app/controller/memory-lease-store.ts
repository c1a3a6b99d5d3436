/**
 * A Lease as the API server keeps it: a create finds it there (conflict), an update carrying a
 * stale resourceVersion is refused (conflict), and every write bumps the version. Each
 * candidate reaches it through its own `view`, so a test can cut one replica off (every call
 * throws) or slow its calls down (the request reaches the Lease late, or its answer comes back
 * late) while the other still gets through.
 */
import type { Clock } from '../../../src/ports/common/clock.js';
import type {
  LeaseRecord,
  LeaseStore,
  LeaseWriteOutcome,
  StoredLease,
} from '../../../src/ports/fleet/controller-cluster.js';

export interface LeaseWrite {
  readonly atMs: number;
  readonly holder: string;
  readonly transitions: number;
}

/** What one replica's calls meet on the way; a test changes it while the replicas run. */
export interface ViewFault {
  /** Thrown instead of the answer (after the latencies). */
  error: Error | null;
  /** Virtual time before a call reaches the Lease (it is read or written then). */
  requestLatencyMs: number;
  /** Virtual time before the answer of a call that reached the Lease comes back. */
  responseLatencyMs: number;
  /** The same, for writes only: the write landed, its answer is late. */
  writeResponseLatencyMs: number;
}

export function healthy(): ViewFault {
  return { error: null, requestLatencyMs: 0, responseLatencyMs: 0, writeResponseLatencyMs: 0 };
}

export class MemoryLeaseStore {
  private stored: StoredLease | null = null;
  private version = 0;
  /** Every accepted write, with the virtual time it landed. */
  readonly writes: LeaseWrite[] = [];

  constructor(private readonly clock: Clock) {}

  get current(): StoredLease | null {
    return this.stored;
  }

  /** A replica's access to the Lease; its faults are its own. */
  view(fault: ViewFault = healthy()): LeaseStore {
    const answer = async <T>(body: () => T, write: boolean): Promise<T> => {
      if (fault.requestLatencyMs > 0) await this.clock.sleep(fault.requestLatencyMs);
      const error = fault.error;
      const result = error === null ? body() : null;
      const latencyMs = fault.responseLatencyMs + (write ? fault.writeResponseLatencyMs : 0);
      if (latencyMs > 0) await this.clock.sleep(latencyMs);
      if (error !== null) throw error;
      return result as T;
    };
    return {
      get: () => answer(() => this.stored, false),
      create: (lease) => answer(() => this.create(lease), true),
      update: (resourceVersion, lease) => answer(() => this.update(resourceVersion, lease), true),
    };
  }

  private create(lease: LeaseRecord): LeaseWriteOutcome {
    if (this.stored !== null) return { kind: 'conflict' };
    return this.write(lease);
  }

  private update(resourceVersion: string, lease: LeaseRecord): LeaseWriteOutcome {
    if (this.stored === null || this.stored.resourceVersion !== resourceVersion) return { kind: 'conflict' };
    return this.write(lease);
  }

  private write(lease: LeaseRecord): LeaseWriteOutcome {
    this.version += 1;
    this.stored = { resourceVersion: String(this.version), lease: { ...lease } };
    this.writes.push({ atMs: this.clock.nowMs(), holder: lease.holder, transitions: lease.transitions });
    return { kind: 'written', lease: this.stored };
  }
}
