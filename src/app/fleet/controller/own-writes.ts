import { jsonEqual } from '../../../domain/fleet/status/json-equal.js';
import type { AgentRolloutStatus } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutObject } from '../../../domain/fleet/order/snapshot.js';
import type { ClusterCache } from './cluster-cache.js';

/**
 * How long the memory of a write is trusted at most: past it, a rollout is planned from the
 * caches whatever they show, so a watch that lost an event delays a plan, never stops it.
 */
export const OWN_WRITE_MEMORY_MS = 30_000;

/** A plan fully applied with no create and no quarantine: only its own status changed the inputs. */
interface Settled {
  readonly otherChanges: number;
  readonly generation: number;
  readonly annotations: Readonly<Record<string, string>>;
  readonly status: AgentRolloutStatus;
  readonly atMs: number;
  readonly requeueAtMs: number;
}

/**
 * What this controller wrote for each rollout, until its caches show it: the status version it
 * replaced, the operations it created (client-go's "expectations"), and the status of a plan that
 * changed nothing else. A plan from caches that lag behind its own writes would only repeat them
 * (a 409, an AlreadyExists); one from caches that differ from the last plan's inputs by its own
 * status alone would change nothing (the planner is a fixpoint of its own output). Both wait.
 */
export class OwnWrites {
  private readonly replaced = new Map<string, { readonly resourceVersion: string; readonly atMs: number }>();
  private readonly expected = new Map<string, { readonly names: Map<string, string>; readonly sinceMs: number }>();
  /** The status this process last wrote per rollout: fresher than the cache while the watch lags. */
  private readonly written = new Map<
    string,
    { readonly resourceVersion: string; readonly status: AgentRolloutStatus }
  >();
  private readonly settled = new Map<string, Settled>();

  constructor(private readonly cache: ClusterCache) {}

  /** Whether planning `rollout` now would only repeat or echo this controller's own writes. */
  pending(rollout: RolloutObject, nowMs: number): boolean {
    return this.lagging(rollout, nowMs) || this.echo(rollout, nowMs);
  }

  /**
   * Whether the caches show everything this process wrote for `rollout`: the status it replaced is
   * gone from them and every operation it created is in them (or its memory of them expired).
   */
  caughtUp(rollout: RolloutObject, nowMs: number): boolean {
    return !this.lagging(rollout, nowMs);
  }

  statusReplaced(name: string, resourceVersion: string, status: AgentRolloutStatus, nowMs: number): void {
    this.replaced.set(name, { resourceVersion, atMs: nowMs });
    this.written.set(name, { resourceVersion, status });
  }

  created(rollout: string, child: string, machineRef: string, nowMs: number): void {
    const expected = this.expected.get(rollout) ?? { names: new Map<string, string>(), sinceMs: nowMs };
    expected.names.set(child, machineRef);
    this.expected.set(rollout, expected);
  }

  /** The rollout's status as this process knows it best: what it wrote, while the cache still shows what that replaced. */
  latestStatus(rollout: RolloutObject): unknown {
    const written = this.written.get(rollout.name);
    return written?.resourceVersion === rollout.resourceVersion ? written.status : rollout.status;
  }

  /** Per rollout, the operations this process created that the cache does not show yet. */
  unseenCreates(): Map<string, { readonly name: string; readonly machineRef: string }[]> {
    const unseen = new Map<string, { readonly name: string; readonly machineRef: string }[]>();
    for (const [rollout, expected] of this.expected) {
      const operations = [...expected.names]
        .filter(([child]) => this.cache.get('operations', child) === undefined)
        .map(([name, machineRef]) => ({ name, machineRef }));
      if (operations.length > 0) unseen.set(rollout, operations);
    }
    return unseen;
  }

  /** A plan whose only effect on the inputs is `status` was applied whole (with its events). */
  settledWith(rollout: RolloutObject, status: AgentRolloutStatus, nowMs: number, requeueAfterMs: number | null): void {
    this.settled.set(rollout.name, {
      otherChanges: this.cache.otherChanges,
      generation: rollout.generation,
      annotations: rollout.annotations,
      status,
      atMs: nowMs,
      requeueAtMs: requeueAfterMs === null ? Number.POSITIVE_INFINITY : nowMs + requeueAfterMs,
    });
  }

  /** The plan was not applied whole, or the rollout changed: plan again from the caches. */
  unsettled(name: string): void {
    this.settled.delete(name);
  }

  forget(name: string): void {
    this.replaced.delete(name);
    this.expected.delete(name);
    this.settled.delete(name);
    this.written.delete(name);
  }

  private lagging(rollout: RolloutObject, nowMs: number): boolean {
    const replaced = this.replaced.get(rollout.name);
    if (replaced?.resourceVersion === rollout.resourceVersion && nowMs - replaced.atMs < OWN_WRITE_MEMORY_MS)
      return true;
    const expected = this.expected.get(rollout.name);
    if (expected === undefined) return false;
    for (const child of [...expected.names.keys()])
      if (this.cache.get('operations', child) !== undefined) expected.names.delete(child);
    if (expected.names.size > 0 && nowMs - expected.sinceMs < OWN_WRITE_MEMORY_MS) return true;
    this.expected.delete(rollout.name);
    return false;
  }

  private echo(rollout: RolloutObject, nowMs: number): boolean {
    const settled = this.settled.get(rollout.name);
    if (settled === undefined) return false;
    const same =
      settled.otherChanges === this.cache.otherChanges &&
      settled.generation === rollout.generation &&
      nowMs < settled.requeueAtMs &&
      nowMs - settled.atMs < OWN_WRITE_MEMORY_MS &&
      jsonEqual(settled.annotations, rollout.annotations) &&
      jsonEqual(settled.status, rollout.status);
    if (!same) this.settled.delete(rollout.name);
    return same;
  }
}
