/**
 * An in-memory API server for the controller's app layer: rollouts, releases, nodes and
 * MachineOperations with resourceVersions, written the way the real one answers (a stale
 * resourceVersion is a conflict, an existing name is `exists`, every accepted write bumps the
 * version and reaches the watches). Each controller talks to it through a `client(identity)`,
 * so a test reads afterwards who wrote what, and when. A test can make the Nth write attempt
 * answer `conflict` or `exists`, or throw.
 */
import type { RolloutEvent } from '../../../src/domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../src/domain/fleet/decide/child-manifest.js';
import type { AgentReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import type { ReleaseObject, RolloutObject } from '../../../src/domain/fleet/order/snapshot.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import {
  type ControllerCluster,
  type CreateOutcome,
  type InformerEvent,
  type OperationFacts,
  type ResourceKind,
  type ResourceShapes,
  type StatusUpdateOutcome,
} from '../../../src/ports/fleet/controller-cluster.js';
import { RESOURCE_KINDS } from '../../../src/app/fleet/controller/cluster-cache.js';
import type { ClusterCache } from '../../../src/app/fleet/controller/cluster-cache.js';

export type WriteKind = 'rolloutStatus' | 'releaseStatus' | 'quarantine' | 'create' | 'event';

/** One write the server accepted. */
export interface AppliedWrite {
  readonly kind: WriteKind;
  /** The object written (for an event: the rollout or release it is about). */
  readonly name: string;
  readonly by: string;
  readonly atMs: number;
  readonly status?: AgentRolloutStatus | AgentReleaseStatus;
  readonly reason?: string;
}

/** What the Nth write attempt gets instead of its normal answer. */
export type Fault = 'conflict' | 'exists' | Error;

interface Watcher {
  readonly onEvent: (event: InformerEvent) => void;
  readonly listed: Set<ResourceKind>;
  readonly fail: (error: Error) => void;
}

export class FakeApiServer {
  private readonly objects: { [K in ResourceKind]: Map<string, ResourceShapes[K]> } = {
    nodes: new Map(),
    releases: new Map(),
    rollouts: new Map(),
    operations: new Map(),
    leases: new Map(),
  };
  private version = 100;
  /** Write attempts so far, in all and by kind. */
  private readonly attempts = new Map<WriteKind | 'any', number>();
  private readonly faults = new Map<string, Fault>();
  private readonly watchers = new Set<Watcher>();
  readonly writes: AppliedWrite[] = [];
  /** How long an informer takes to list each kind (virtual time); 0 when unset. */
  readonly listDelayMs: Partial<Record<ResourceKind, number>> = {};

  constructor(private readonly clock: Clock) {}

  /**
   * Makes the `nth` write attempt from now on (1-based, counting every client) answer `fault`;
   * with `kind`, the nth attempt of that kind of write.
   */
  faultAt(nth: number, fault: Fault, kind: WriteKind | 'any' = 'any'): void {
    this.faults.set(`${kind}/${(this.attempts.get(kind) ?? 0) + nth}`, fault);
  }

  /** Creates or replaces an object as someone outside the controller would; the watches see it. */
  put<K extends ResourceKind>(kind: K, object: ResourceShapes[K]): void {
    const stored = 'resourceVersion' in object ? { ...object, resourceVersion: this.nextVersion() } : object;
    this.objects[kind].set(object.name, stored);
    this.broadcast({ type: 'upsert', kind, object: stored } as InformerEvent);
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceShapes[K] | undefined {
    return this.objects[kind].get(name);
  }

  list<K extends ResourceKind>(kind: K): ResourceShapes[K][] {
    return [...this.objects[kind].values()];
  }

  /** Fills `cache` as a fresh list of every kind would: the test plays the informers. */
  listInto(cache: ClusterCache): void {
    for (const kind of RESOURCE_KINDS)
      cache.apply({ type: 'replace', kind, objects: this.list(kind) } as InformerEvent);
  }

  /** Every informer open now fails with `error` (credentials revoked, say). */
  failInformers(error: Error): void {
    for (const watcher of [...this.watchers]) watcher.fail(error);
  }

  client(identity: string): ControllerCluster {
    return {
      inform: (onEvent, signal) => this.inform(onEvent, signal),
      updateRolloutStatus: async (name, resourceVersion, status) =>
        this.updateStatus('rollouts', identity, name, resourceVersion, status),
      updateReleaseStatus: async (name, resourceVersion, status) =>
        this.updateStatus('releases', identity, name, resourceVersion, status),
      quarantineRelease: async (name, quarantine) => this.quarantine(identity, name, quarantine),
      createOperation: async (operation) => this.create(identity, operation),
      recordEvent: async (event, atMs) => this.recordEvent(identity, event, atMs),
      close: () => undefined,
    };
  }

  private async inform(onEvent: (event: InformerEvent) => void, signal: AbortSignal): Promise<void> {
    let fail: (error: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    const watcher: Watcher = { onEvent, listed: new Set(), fail };
    this.watchers.add(watcher);
    const stopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([this.listAll(watcher, signal), stopped, failed]);
      await Promise.race([stopped, failed]);
    } finally {
      this.watchers.delete(watcher);
    }
  }

  private async listAll(watcher: Watcher, signal: AbortSignal): Promise<void> {
    for (const kind of RESOURCE_KINDS) {
      const delayMs = this.listDelayMs[kind] ?? 0;
      if (delayMs > 0) await this.clock.sleep(delayMs, signal);
      if (signal.aborted) return;
      watcher.listed.add(kind);
      watcher.onEvent({ type: 'replace', kind, objects: this.list(kind) } as InformerEvent);
    }
  }

  /** Watch events reach the informers after the write's answer, as they do over HTTP. */
  private broadcast(event: InformerEvent): void {
    void Promise.resolve().then(() => {
      for (const watcher of this.watchers) if (watcher.listed.has(event.kind)) watcher.onEvent(event);
    });
  }

  private nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  /** The fault planned for this write attempt, if any; a thrown one is thrown here. */
  private attempt(kind: WriteKind): 'conflict' | 'exists' | null {
    let fault: Fault | undefined;
    for (const counter of ['any', kind] as const) {
      const nth = (this.attempts.get(counter) ?? 0) + 1;
      this.attempts.set(counter, nth);
      fault ??= this.faults.get(`${counter}/${nth}`);
      this.faults.delete(`${counter}/${nth}`);
    }
    if (fault instanceof Error) throw fault;
    return fault ?? null;
  }

  private record(write: Omit<AppliedWrite, 'atMs'>): void {
    this.writes.push({ ...write, atMs: this.clock.nowMs() });
  }

  private updateStatus(
    kind: 'rollouts' | 'releases',
    by: string,
    name: string,
    resourceVersion: string,
    status: AgentRolloutStatus | AgentReleaseStatus,
  ): StatusUpdateOutcome {
    if (this.attempt(kind === 'rollouts' ? 'rolloutStatus' : 'releaseStatus') !== null) return 'conflict';
    const current: RolloutObject | ReleaseObject | undefined = this.objects[kind].get(name);
    if (current === undefined) return 'not-found';
    if (current.resourceVersion !== resourceVersion) return 'conflict';
    const next = { ...current, status: structuredClone(status), resourceVersion: this.nextVersion() };
    (this.objects[kind] as Map<string, RolloutObject | ReleaseObject>).set(name, next);
    this.broadcast({ type: 'upsert', kind, object: next } as InformerEvent);
    this.record({ kind: kind === 'rollouts' ? 'rolloutStatus' : 'releaseStatus', name, by, status });
    return 'updated';
  }

  private quarantine(by: string, name: string, quarantine: { quarantined: true; reason: string }): boolean {
    this.attempt('quarantine');
    const release = this.objects.releases.get(name);
    if (release === undefined) return false;
    const next = { ...release, spec: { ...(release.spec as object), quarantine }, resourceVersion: this.nextVersion() };
    this.objects.releases.set(name, next);
    this.broadcast({ type: 'upsert', kind: 'releases', object: next });
    this.record({ kind: 'quarantine', name, by });
    return true;
  }

  private create(by: string, manifest: MachineOperationManifest): CreateOutcome {
    const { name, labels, ownerReferences } = manifest.metadata;
    if (this.attempt('create') === 'exists' || this.objects.operations.has(name)) return 'exists';
    const operation: OperationFacts = {
      name,
      uid: `uid-${name}`,
      machineRef: manifest.spec.machineRef,
      labels,
      ownerUid: ownerReferences[0]?.uid ?? null,
      phase: null,
      reason: null,
      message: null,
      createdMs: this.clock.nowMs(),
      startedMs: null,
      completedMs: null,
    };
    this.objects.operations.set(name, operation);
    this.broadcast({ type: 'upsert', kind: 'operations', object: operation });
    this.record({ kind: 'create', name, by });
    return 'created';
  }

  private recordEvent(by: string, event: RolloutEvent, _atMs: number): void {
    this.attempt('event');
    this.record({ kind: 'event', name: event.regarding.name, by, reason: event.reason });
  }
}
