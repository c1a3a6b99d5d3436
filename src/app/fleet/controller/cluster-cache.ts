import { isLivePhase } from '../../../domain/fleet/order/snapshot.js';
import { LABEL_ROLLOUT } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import type { LeaseFacts } from '../../../domain/fleet/order/snapshot.js';
import type {
  InformerEvent,
  OperationFacts,
  ResourceKind,
  ResourceShapes,
} from '../../../ports/fleet/controller-cluster.js';

/** The informed resources; the caches are synced once each was listed. */
export const RESOURCE_KINDS: readonly ResourceKind[] = ['nodes', 'releases', 'rollouts', 'operations', 'leases'];

/** A reconcile to run: a rollout's plan, or a release's status. */
export type WorkKey = `rollout/${string}` | `release/${string}`;

/**
 * The informer caches, the controller's only source of reads: one map per resource, by name,
 * filled by `replace` and kept current by `upsert` and `delete`. `apply` says which reconciles a
 * change can affect; none are due before every informer has listed once (`synced`), since a plan
 * from a partial cache would count the machines not listed yet as vanished.
 */
export class ClusterCache {
  private readonly maps: { [K in ResourceKind]: Map<string, ResourceShapes[K]> } = {
    nodes: new Map(),
    releases: new Map(),
    rollouts: new Map(),
    operations: new Map(),
    leases: new Map(),
  };
  /** The latest completion of an operation on each machine: what a Lease's renewal may prove. */
  private readonly completedOn = new Map<string, number>();
  private readonly listed = new Set<ResourceKind>();
  /** Changes to anything but the rollouts themselves: a plan's inputs besides its own rollout. */
  otherChanges = 0;
  /** Watch events applied (a simulation compares it over time to tell when a fleet has settled). */
  eventsApplied = 0;

  get synced(): boolean {
    return this.listed.size === RESOURCE_KINDS.length;
  }

  all<K extends ResourceKind>(kind: K): IterableIterator<ResourceShapes[K]> {
    return this.maps[kind].values();
  }

  get<K extends ResourceKind>(kind: K, name: string): ResourceShapes[K] | undefined {
    return this.maps[kind].get(name);
  }

  /** The whole cache of one kind, by name (read-only: the planner reads it synchronously). */
  byName<K extends ResourceKind>(kind: K): ReadonlyMap<string, ResourceShapes[K]> {
    return this.maps[kind];
  }

  /** Applies one informer event; returns the work it makes due (every reconcile, once the caches first sync). */
  apply(event: InformerEvent): WorkKey[] {
    const wasSynced = this.synced;
    const map = this.maps[event.kind] as Map<string, ResourceShapes[ResourceKind]>;
    if (event.kind !== 'rollouts') this.otherChanges += 1;
    if (event.type !== 'replace') this.eventsApplied += 1;
    const previous =
      event.type === 'replace' ? undefined : map.get(event.type === 'upsert' ? event.object.name : event.name);
    if (event.type === 'replace') {
      map.clear();
      for (const object of event.objects) map.set(object.name, object);
      if (event.kind === 'operations') for (const object of event.objects) this.noteCompletion(object);
      this.listed.add(event.kind);
    } else {
      if (event.kind === 'operations' && event.type === 'upsert') this.noteCompletion(event.object);
      if (event.type === 'upsert') map.set(event.object.name, event.object);
      else map.delete(event.name);
    }
    if (!this.synced) return [];
    if (!wasSynced || event.type === 'replace') return this.everything();
    return this.affected(event, previous);
  }

  /** Every rollout and release: after a (re)list, or for the periodic resync. */
  everything(): WorkKey[] {
    return [...this.rolloutWork(), ...[...this.maps.releases.keys()].map((name) => `release/${name}` as const)];
  }

  private affected(
    event: Exclude<InformerEvent, { type: 'replace' }>,
    previous: ResourceShapes[ResourceKind] | undefined,
  ): WorkKey[] {
    const name = event.type === 'upsert' ? event.object.name : event.name;
    switch (event.kind) {
      case 'rollouts':
        return [`rollout/${name}`];
      case 'releases':
        // Any rollout may name it (forward or rollback); there are few rollouts.
        return [`release/${name}`, ...this.rolloutWork()];
      case 'operations': {
        const owner = event.type === 'upsert' ? event.object.labels[LABEL_ROLLOUT] : undefined;
        const before = previous as OperationFacts | undefined;
        const wasLive = before !== undefined && isLivePhase(before.phase);
        const isLive = event.type === 'upsert' && isLivePhase(event.object.phase);
        // A child that only moves along concerns its rollout alone. One that starts or stops
        // being live, and any other operation, may start or end a conflict for every rollout.
        if (owner !== undefined && this.maps.rollouts.has(owner) && wasLive === isLive) return [`rollout/${owner}`];
        return this.rolloutWork();
      }
      case 'nodes':
        return this.rolloutWork();
      case 'leases':
        return this.leaseMatters(event, previous as LeaseFacts | undefined) ? this.rolloutWork() : [];
    }
  }

  /**
   * A kubelet renews its Lease every ten seconds: a fleet of 10,000 sends a thousand renewals a
   * second, and almost none changes a verdict. One does when it is the first renewal after an
   * operation on that machine completed, when the Lease had run out before it (the node came
   * back), or when the Lease appears, goes or changes its duration. A Lease running out is a
   * matter of time, which the planner's requeue covers.
   */
  private leaseMatters(event: Exclude<InformerEvent, { type: 'replace' }>, before: LeaseFacts | undefined): boolean {
    if (event.type === 'delete' || before === undefined) return true;
    const lease = event.object as LeaseFacts;
    if (lease.durationMs !== before.durationMs || before.renewMs === null || lease.renewMs === null) return true;
    if (lease.renewMs - before.renewMs > (before.durationMs ?? Number.POSITIVE_INFINITY)) return true;
    const completedMs = this.completedOn.get(lease.name);
    return completedMs !== undefined && completedMs >= before.renewMs && completedMs < lease.renewMs;
  }

  private noteCompletion(operation: OperationFacts): void {
    if (operation.completedMs === null) return;
    const known = this.completedOn.get(operation.machineRef);
    if (known === undefined || operation.completedMs > known)
      this.completedOn.set(operation.machineRef, operation.completedMs);
  }

  private rolloutWork(): WorkKey[] {
    return [...this.maps.rollouts.keys()].map((name) => `rollout/${name}` as const);
  }
}
