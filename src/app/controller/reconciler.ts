import type { RolloutAction } from '../../domain/rollout/actions.js';
import type { ForeignOperation, RolloutSnapshot } from '../../domain/rollout/snapshot.js';
import { jsonEqual } from '../../domain/rollout/json-equal.js';
import { planReleaseStatus } from '../../domain/rollout/release-status.js';
import { planRollout } from '../../domain/rollout/plan-rollout.js';
import { readPreviousStatus } from '../../domain/rollout/read-status.js';
import type { Clock } from '../../ports/clock.js';
import type { ControllerCluster } from '../../ports/controller-cluster.js';
import type { ControllerMetrics } from '../../ports/controller-metrics.js';
import type { Logger } from '../../ports/logger.js';
import type { ClusterCache, WorkKey } from './cluster-cache.js';
import { OWN_WRITE_MEMORY_MS, OwnWrites } from './own-writes.js';
import { claimsElsewhere } from './claims-elsewhere.js';
import { rolloutSnapshot } from './rollout-snapshot.js';

/** Plan again this soon after a 409 that no watch event may follow (someone else's write, a fault). */
export const CONFLICT_RETRY_MS = 1_000;

export interface ReconcileResult {
  /** `applied`: every action ran; `conflict`: the status update was refused and the rest dropped. */
  readonly outcome: 'applied' | 'conflict' | 'waiting' | 'gone';
  readonly requeueAfterMs: number | null;
}

export interface ReconcilerDeps {
  readonly cluster: ControllerCluster;
  readonly cache: ClusterCache;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
}

/**
 * One reconcile: a snapshot from the caches, the planner's actions, executed one at a time and in
 * order, each a durable effect of its own. The first refused write ends it (the rest of the plan
 * was computed from what the refusal proves stale); an AlreadyExists create is success, since
 * child names are derived and a create may have landed before a crash. A ClusterError propagates:
 * the loop backs off and plans again. Events are best-effort: a lost Event changes no state.
 */
export class Reconciler {
  private readonly own: OwnWrites;

  constructor(private readonly d: ReconcilerDeps) {
    this.own = new OwnWrites(d.cache);
  }

  async reconcile(key: WorkKey): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const name = key.slice(slash + 1);
    return key.startsWith('release/') ? this.reconcileRelease(name) : this.reconcileRollout(name);
  }

  private async reconcileRollout(name: string): Promise<ReconcileResult> {
    const { cache, clock, metrics } = this.d;
    const found = rolloutSnapshot(cache, name);
    const snapshot =
      found === null
        ? null
        : { ...found, foreignOperations: [...found.foreignOperations, ...this.claimsOf(name, found.nodes)] };
    if (snapshot === null) {
      this.own.forget(name);
      metrics.rolloutForgotten(name);
      return { outcome: 'gone', requeueAfterMs: null };
    }
    // The plan reads the wall clock (windows, timeouts: times the API server stamped); what this
    // process remembers of its own writes ages on the monotonic one.
    const nowMs = clock.nowMs();
    const seenMs = clock.monotonicMs();
    if (this.own.pending(snapshot.rollout, seenMs)) return { outcome: 'waiting', requeueAfterMs: OWN_WRITE_MEMORY_MS };
    const plan = planRollout(snapshot, nowMs);
    const previousHalt = readPreviousStatus(snapshot.rollout.status).halt;
    let onlyStatus = true;
    for (const action of plan.actions) {
      if (action.kind === 'UpdateRolloutStatus') {
        const outcome = await this.d.cluster.updateRolloutStatus(action.name, action.resourceVersion, action.status);
        if (outcome !== 'updated') return { outcome: 'conflict', requeueAfterMs: CONFLICT_RETRY_MS };
        // A status equal to the stored one is no write on the API server: the resourceVersion stays
        // and no watch event follows, so there is nothing to wait for.
        if (!jsonEqual(action.status, snapshot.rollout.status))
          this.own.statusReplaced(name, action.resourceVersion, action.status, seenMs);
        metrics.rolloutObserved(name, action.status);
        const halt = action.status.halt;
        if (halt !== undefined && halt.id !== previousHalt?.id) metrics.halted(name, halt.reason);
      } else if (action.kind === 'CreateOperation') {
        onlyStatus = false;
        if ((await this.d.cluster.createOperation(action.operation)) === 'created')
          this.own.created(name, action.operation.metadata.name, action.operation.spec.machineRef, seenMs);
      } else {
        if (action.kind === 'QuarantineRelease') onlyStatus = false;
        await this.execute(action, nowMs);
      }
    }
    if (onlyStatus) this.own.settledWith(snapshot.rollout, plan.status, seenMs, plan.requeueAfterMs);
    else this.own.unsettled(name);
    return { outcome: 'applied', requeueAfterMs: plan.requeueAfterMs };
  }

  /** What other rollouts hold that the caches do not show as operations yet (claims-elsewhere.ts). */
  private claimsOf(name: string, nodes: RolloutSnapshot['nodes']): ForeignOperation[] {
    const others = [...this.d.cache.all('rollouts')].map((object) => ({
      object,
      status: this.own.latestStatus(object),
    }));
    return claimsElsewhere(name, others, nodes, this.own.unseenCreates());
  }

  private async execute(
    action: Exclude<RolloutAction, { kind: 'UpdateRolloutStatus' | 'CreateOperation' }>,
    nowMs: number,
  ): Promise<void> {
    const { cluster, logger } = this.d;
    switch (action.kind) {
      case 'QuarantineRelease':
        if (!(await cluster.quarantineRelease(action.name, action.quarantine)))
          logger.warn({ release: action.name }, 'The release to quarantine is gone; nothing to mark.');
        return;
      case 'RecordEvent': {
        const { event } = action;
        const log = event.type === 'Warning' ? logger.warn.bind(logger) : logger.info.bind(logger);
        log(
          {
            [event.regarding.kind === 'AgentRollout' ? 'rollout' : 'release']: event.regarding.name,
            reason: event.reason,
          },
          event.message,
        );
        await cluster.recordEvent(event, nowMs).catch((error: unknown) => {
          logger.warn({ reason: event.reason }, `The Event could not be recorded: ${(error as Error).message}`);
        });
        return;
      }
    }
  }

  private async reconcileRelease(name: string): Promise<ReconcileResult> {
    const release = this.d.cache.get('releases', name);
    if (release === undefined) return { outcome: 'gone', requeueAfterMs: null };
    const update = planReleaseStatus(release, this.d.clock.nowMs());
    if (update === null) return { outcome: 'applied', requeueAfterMs: null };
    const outcome = await this.d.cluster.updateReleaseStatus(update.name, update.resourceVersion, update.status);
    return outcome === 'updated'
      ? { outcome: 'applied', requeueAfterMs: null }
      : { outcome: 'conflict', requeueAfterMs: CONFLICT_RETRY_MS };
  }
}
