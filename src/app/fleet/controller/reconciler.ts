import type { RolloutAction } from '../../../domain/fleet/decide/actions.js';
import type { ForeignOperation, RolloutSnapshot } from '../../../domain/fleet/order/snapshot.js';
import { jsonEqual } from '../../../domain/fleet/status/json-equal.js';
import { planReleaseStatus } from '../../../domain/fleet/status/release-status.js';
import { planRollout } from '../../../domain/fleet/decide/plan-rollout.js';
import { PlannerMemo } from '../../../domain/fleet/order/planner-memo.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ControllerCluster } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ClusterCache, WorkKey } from './cluster-cache.js';
import { OWN_WRITE_MEMORY_MS, OwnWrites } from './own-writes.js';
import { claimsElsewhere } from './claims-elsewhere.js';
import { CREATE_BATCH_MAX, nextFirstBatch, reconcileSteps, type ReconcileStep } from './reconcile-steps.js';
import { rolloutSnapshot } from './rollout-snapshot.js';
import { messageOf } from '../../../domain/common/message-of.js';
import { untrustedEvent } from '../../../domain/fleet/trust/release-signature.js';
import { ReleaseVerifier, type ControllerTrust } from './release-verifier.js';
import type { MetricsQuery } from '../../../ports/fleet/metrics-query.js';
import { AnalysisMeasurer, NO_METRICS_QUERY } from './analysis-measurer.js';

/** Plan again this soon after a 409 that no watch event may follow (someone else's write, a fault). */
export const CONFLICT_RETRY_MS = 1_000;

export interface ReconcileResult {
  /** `applied`: every action ran; `conflict`: the status update was refused and the rest dropped. */
  readonly outcome: 'applied' | 'conflict' | 'waiting' | 'gone';
  readonly requeueAfterMs: number | null;
  /**
   * The reconcile created operations: its plan may have more to dispatch (a step announces at most
   * MAX_PENDING_CREATES), so plan again as soon as the caches show what it wrote (`ownWritesSeen`).
   */
  readonly created?: boolean;
}

export interface ReconcilerDeps {
  readonly cluster: ControllerCluster;
  readonly cache: ClusterCache;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  /** The largest slow-start batch of creates (reconcile-steps.ts); default CREATE_BATCH_MAX. */
  readonly createBatchMax?: number;
  /** Signed releases (`controller --config`): every release is verified before any rollout dispatches it. */
  readonly trust?: ControllerTrust | null;
  /** Where waves' analyses query Prometheus (analysis-measurer.ts); default none: every measurement an error. */
  readonly metricsQuery?: MetricsQuery;
}

/**
 * One reconcile: a snapshot from the caches, the planner's actions, executed in order one step at
 * a time, each a durable effect of its own — but a plan's creates, which go out in slow-start
 * batches of 1, 2, 4, … sent together (reconcile-steps.ts). The first refused write ends it (the
 * rest of the plan was computed from what the refusal proves stale; a refused create ends its
 * batch, whose other creates still land); an AlreadyExists create is success, since child names
 * are derived and a create may have landed before a crash. A ClusterError propagates: the loop
 * backs off and plans again. Events are best-effort: a lost Event changes no state.
 */
export class Reconciler {
  private readonly own: OwnWrites;
  /** What the planner keeps between plans (planner-memo.ts): it makes a plan cheaper, never different. */
  private readonly memo = new PlannerMemo();
  private readonly verifier: ReleaseVerifier | null;
  private readonly measurer: AnalysisMeasurer;
  /** The size of the first batch of the next plan's creates (nextFirstBatch). */
  private firstBatch = 1;

  constructor(private readonly d: ReconcilerDeps) {
    this.own = new OwnWrites(d.cache);
    this.measurer = new AnalysisMeasurer({ ...d, query: d.metricsQuery ?? NO_METRICS_QUERY });
    this.verifier = d.trust ? new ReleaseVerifier({ ...d, trust: d.trust }) : null;
  }

  private get batchMax(): number {
    return this.d.createBatchMax ?? CREATE_BATCH_MAX;
  }

  /** `signal` ends a release's verification early (the loop is stopping). */
  async reconcile(key: WorkKey, signal?: AbortSignal): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const name = key.slice(slash + 1);
    return key.startsWith('release/') ? this.reconcileRelease(name, signal) : this.reconcileRollout(name);
  }

  private async reconcileRollout(name: string): Promise<ReconcileResult> {
    const { cache, clock, metrics } = this.d;
    const found = rolloutSnapshot(cache, name, this.verifier !== null);
    const snapshot =
      found === null
        ? null
        : { ...found, foreignOperations: [...found.foreignOperations, ...this.claimsOf(name, found.nodes)] };
    if (snapshot === null) {
      this.own.forget(name);
      this.memo.forget(name);
      metrics.rolloutForgotten(name);
      return { outcome: 'gone', requeueAfterMs: null };
    }
    // The plan reads the wall clock (windows, timeouts: times the API server stamped); what this
    // process remembers of its own writes ages on the monotonic one.
    const seenMs = clock.monotonicMs();
    if (this.own.pending(snapshot.rollout, seenMs)) return { outcome: 'waiting', requeueAfterMs: OWN_WRITE_MEMORY_MS };
    // Measurements due for the waves' analyses are taken first, and planned with (and recorded).
    const measurements = await this.measurer.measure(snapshot, clock.nowMs());
    const nowMs = clock.nowMs();
    const plan = planRollout(measurements.length === 0 ? snapshot : { ...snapshot, measurements }, nowMs, this.memo);
    const previousHalt = readPreviousStatus(snapshot.rollout.status).halt;
    let onlyStatus = true;
    let created = false;
    let largestBatch = 0;
    for (const step of reconcileSteps(plan.actions, this.batchMax, this.firstBatch)) {
      if (step.kind === 'UpdateRolloutStatus') {
        const outcome = await this.d.cluster.updateRolloutStatus(step.name, step.resourceVersion, step.status);
        if (outcome !== 'updated') return { outcome: 'conflict', requeueAfterMs: CONFLICT_RETRY_MS };
        // A status equal to the stored one is no write on the API server: the resourceVersion stays
        // and no watch event follows, so there is nothing to wait for.
        if (!jsonEqual(step.status, snapshot.rollout.status))
          this.own.statusReplaced(name, step.resourceVersion, step.status, seenMs);
        metrics.rolloutObserved(name, step.status);
        const halt = step.status.halt;
        if (halt !== undefined && halt.id !== previousHalt?.id) metrics.halted(name, halt.reason);
      } else if (step.kind === 'CreateBatch') {
        onlyStatus = false;
        if (await this.createBatch(name, step, seenMs)) created = true;
        largestBatch = Math.max(largestBatch, step.operations.length);
      } else {
        if (step.kind === 'QuarantineRelease') onlyStatus = false;
        await this.execute(step, nowMs);
      }
    }
    if (largestBatch > 0) this.firstBatch = nextFirstBatch(largestBatch, this.batchMax);
    if (onlyStatus) this.own.settledWith(snapshot.rollout, plan.status, seenMs, plan.requeueAfterMs);
    else this.own.unsettled(name);
    return { outcome: 'applied', requeueAfterMs: plan.requeueAfterMs, created };
  }

  /** Whether the caches show every write this process made for the work `key` (true for a rollout gone). */
  ownWritesSeen(key: WorkKey): boolean {
    if (!key.startsWith('rollout/')) return true;
    const rollout = this.d.cache.get('rollouts', key.slice('rollout/'.length));
    return rollout === undefined || this.own.caughtUp(rollout, this.d.clock.monotonicMs());
  }

  /**
   * Sends a batch's creates together and waits for every answer. The first refusal ends the
   * reconcile once the batch is answered (the creates sent with it land or fail on their own);
   * "exists" is success. True when one at least was created (rather than found to exist).
   */
  private async createBatch(
    name: string,
    batch: Extract<ReconcileStep, { kind: 'CreateBatch' }>,
    seenMs: number,
  ): Promise<boolean> {
    let created = false;
    const answers = await Promise.allSettled(
      batch.operations.map(async (operation) => {
        if ((await this.d.cluster.createOperation(operation)) !== 'created') return;
        this.own.created(name, operation.metadata.name, operation.spec.machineRef, seenMs);
        created = true;
      }),
    );
    const refused = answers.find((answer) => answer.status === 'rejected');
    if (refused !== undefined) {
      this.firstBatch = 1; // a refusal starts the next slow start from the beginning
      throw refused.reason;
    }
    return created;
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
          logger.warn({ reason: event.reason }, `The Event could not be recorded: ${messageOf(error)}`);
        });
        return;
      }
    }
  }

  /**
   * A release's status: its spec validated and, under signed releases, verified against the signed
   * metadata first (release-verifier.ts), then checked again every REVERIFY_MS.
   */
  private async reconcileRelease(name: string, signal: AbortSignal | undefined): Promise<ReconcileResult> {
    const release = this.d.cache.get('releases', name);
    if (release === undefined) {
      this.verifier?.forget(name);
      return { outcome: 'gone', requeueAfterMs: null };
    }
    const trust = (await this.verifier?.check(release, signal)) ?? null;
    const requeueAfterMs = trust?.recheckAfterMs ?? null;
    if (signal?.aborted === true) return { outcome: 'applied', requeueAfterMs: null };
    const nowMs = this.d.clock.nowMs();
    const update = planReleaseStatus(release, nowMs, trust?.check ?? null);
    if (update === null) return { outcome: 'applied', requeueAfterMs };
    const outcome = await this.d.cluster.updateReleaseStatus(update.name, update.resourceVersion, update.status);
    if (outcome !== 'updated') return { outcome: 'conflict', requeueAfterMs: CONFLICT_RETRY_MS };
    const event = untrustedEvent(release, update.status);
    if (event !== null) await this.execute({ kind: 'RecordEvent', event }, nowMs);
    return { outcome: 'applied', requeueAfterMs };
  }
}
