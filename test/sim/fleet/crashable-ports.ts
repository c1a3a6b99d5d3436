/**
 * A controller process that can be killed at an exact effect: its cluster and Lease ports, over
 * the real adapters, counted effect by effect (status updates, quarantines, creates, Events). A kill planned at write k happens just before that
 * write reaches the API server or just after its answer, and from then on every port call of the
 * process fails, as nothing of a killed process runs on (no lease hand-back, no last event).
 */
import type { RolloutEvent } from '../../../src/domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../src/domain/fleet/decide/child-manifest.js';
import type { AgentReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import type {
  ControllerCluster,
  InformerEvent,
  LeaseRecord,
  LeaseStore,
} from '../../../src/ports/fleet/controller-cluster.js';

export class ProcessKilled extends Error {
  constructor() {
    super('the controller process was killed');
    this.name = 'ProcessKilled';
  }
}

export interface KillPlan {
  /** The process-wide write number (1-based, across every write of every process) to die at. */
  readonly atWrite: number;
  readonly when: 'before' | 'after';
}

/** Counts writes across every process of a run, so planned kills land on global write numbers. */
export class WriteCounter {
  count = 0;
  readonly byKind = new Map<string, number>();
}

export class CrashableProcess {
  private dead = false;
  readonly stop = new AbortController();

  constructor(
    private readonly counter: WriteCounter,
    private readonly kills: KillPlan[],
    private readonly onKilled: () => void,
  ) {}

  get killed(): boolean {
    return this.dead;
  }

  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.stop.abort(new ProcessKilled());
    this.onKilled();
  }

  /** Runs one of the controller's effects, dying before or after it when a kill is planned there. */
  async write<T>(kind: string, effect: () => Promise<T>): Promise<T> {
    if (this.dead) throw new ProcessKilled();
    this.counter.count += 1;
    this.counter.byKind.set(kind, (this.counter.byKind.get(kind) ?? 0) + 1);
    const planned = this.kills[0]?.atWrite === this.counter.count ? this.kills.shift() : undefined;
    if (planned?.when === 'before') {
      this.kill();
      throw new ProcessKilled();
    }
    const result = await effect();
    if (this.dead) throw new ProcessKilled();
    if (planned?.when === 'after') {
      this.kill();
      throw new ProcessKilled();
    }
    return result;
  }

  cluster(inner: ControllerCluster): ControllerCluster {
    return {
      inform: (onEvent: (event: InformerEvent) => void, signal: AbortSignal) =>
        inner.inform(
          (event) => {
            if (!this.dead) onEvent(event);
          },
          AbortSignal.any([signal, this.stop.signal]),
        ),
      updateRolloutStatus: (name: string, rv: string, status: AgentRolloutStatus) =>
        this.write('rollout-status', () => inner.updateRolloutStatus(name, rv, status)),
      updateReleaseStatus: (name: string, rv: string, status: AgentReleaseStatus) =>
        this.write('release-status', () => inner.updateReleaseStatus(name, rv, status)),
      quarantineRelease: (name: string, quarantine: { quarantined: true; reason: string }) =>
        this.write('quarantine', () => inner.quarantineRelease(name, quarantine)),
      createOperation: (operation: MachineOperationManifest) =>
        this.write('create', () => inner.createOperation(operation)),
      recordEvent: (event: RolloutEvent, atMs: number) => this.write('event', () => inner.recordEvent(event, atMs)),
      close: () => inner.close(),
    };
  }

  leases(inner: LeaseStore): LeaseStore {
    return {
      get: () => (this.dead ? Promise.reject(new ProcessKilled()) : inner.get()),
      // Lease renewals are not crash points of the rollout's effects, but a dead process renews nothing.
      create: (lease: LeaseRecord) => (this.dead ? Promise.reject(new ProcessKilled()) : inner.create(lease)),
      update: (rv: string, lease: LeaseRecord) =>
        this.dead ? Promise.reject(new ProcessKilled()) : inner.update(rv, lease),
    };
  }
}
