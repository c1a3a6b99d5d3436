import { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ControllerCluster } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import { ClusterCache, type WorkKey } from './cluster-cache.js';
import { ReconcileQueue } from './reconcile-queue.js';
import { Reconciler } from './reconciler.js';
import type { ControllerTrust } from './release-verifier.js';
import type { MetricsQuery } from '../../../ports/fleet/metrics-query.js';

export interface LoopSettings {
  /** Every reconcile runs again this often even without a change: the level-based safety net. */
  readonly resyncMs: number;
  /** Backoff after a failed reconcile of a key: doubling from here to the maximum. */
  readonly retryDelayMs: number;
  readonly retryDelayMaxMs: number;
  /** How long a change waits for the changes that come with it before it is planned (ReconcileQueue). */
  readonly settleMs: number;
  /** The largest batch of creates a reconcile sends at once (default CREATE_BATCH_MAX). */
  readonly createBatchMax?: number;
  /**
   * A reconcile that created operations plans again as soon as the caches show its writes,
   * without the settle window: nothing else is awaited, and a wave's next step follows at once
   * (default true; false waits it out as for any change, as the controller did before).
   */
  readonly planOnOwnWrites?: boolean;
}

export interface LoopDeps {
  readonly cluster: ControllerCluster;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly settings: LoopSettings;
  /** Signed releases: every release is verified before a rollout dispatches it (release-verifier.ts). */
  readonly trust?: ControllerTrust | null;
  /** Prometheus, for the waves' analyses (analysis-measurer.ts). */
  readonly metricsQuery?: MetricsQuery;
}

/**
 * The acting replica's work: informers fill the caches, every change queues the reconciles it
 * can affect, and one worker runs them one at a time, so the actions of two plans never
 * interleave. Runs until `signal` aborts; rejects when the informers cannot go on (refused
 * credentials) and on any failure that is not the cluster's (a defect: it crashes).
 */
export class ControllerLoop {
  readonly cache = new ClusterCache();
  private readonly queue: ReconcileQueue<WorkKey>;
  private readonly reconciler: Reconciler;
  private readonly failures = new Map<WorkKey, number>();
  /** Work whose last reconcile created operations, until the caches show them (planOnOwnWrites). */
  private readonly awaitingOwnWrites = new Set<WorkKey>();
  private working = false;

  constructor(private readonly d: LoopDeps) {
    this.queue = new ReconcileQueue<WorkKey>(d.clock, d.settings.settleMs);
    this.reconciler = new Reconciler({ ...d, cache: this.cache, createBatchMax: d.settings.createBatchMax });
  }

  /** The caches are filled and no reconcile is queued or running (timers may be set). */
  get idle(): boolean {
    return this.cache.synced && this.queue.idle && !this.working;
  }

  async run(signal: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const end = (): void => stop.abort();
    signal.addEventListener('abort', end, { once: true });
    if (signal.aborted) end();
    const informing = this.d.cluster
      .inform((event) => {
        for (const key of this.cache.apply(event)) this.queueChange(key);
      }, stop.signal)
      .finally(end);
    try {
      await Promise.all([informing, this.work(stop.signal), this.resync(stop.signal)]);
    } finally {
      end();
      this.queue.close();
      signal.removeEventListener('abort', end);
    }
  }

  private async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.take(signal);
      if (key === null) return;
      this.working = true;
      const created = await this.reconcileOne(key, signal).finally(() => {
        this.working = false;
        this.queue.done(key);
      });
      if (created && this.d.settings.planOnOwnWrites !== false) {
        this.awaitingOwnWrites.add(key);
        this.continueIfSeen(key);
      }
    }
  }

  /** A change to `key`'s inputs: it waits out the settle window, unless it completes what the last reconcile wrote. */
  private queueChange(key: WorkKey): void {
    if (!this.continueIfSeen(key)) this.queue.add(key);
  }

  /** Queues `key` at once when its last reconcile's writes are all in the caches now. */
  private continueIfSeen(key: WorkKey): boolean {
    if (!this.awaitingOwnWrites.has(key) || !this.reconciler.ownWritesSeen(key)) return false;
    this.awaitingOwnWrites.delete(key);
    this.queue.addNow(key);
    return true;
  }

  /** True when the reconcile created operations. */
  private async reconcileOne(key: WorkKey, signal: AbortSignal): Promise<boolean> {
    this.awaitingOwnWrites.delete(key);
    const { clock, metrics, logger, settings } = this.d;
    const startedMs = clock.monotonicMs();
    try {
      const result = await this.reconciler.reconcile(key, signal);
      metrics.reconciled(clock.monotonicMs() - startedMs, result.outcome === 'conflict' ? 'conflict' : 'applied');
      this.failures.delete(key);
      if (result.requeueAfterMs !== null) this.queue.addAfter(key, result.requeueAfterMs);
      return result.created === true;
    } catch (error) {
      if (!(error instanceof ClusterError)) throw error;
      metrics.reconciled(clock.monotonicMs() - startedMs, 'error');
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const delayMs = Math.min(settings.retryDelayMaxMs, settings.retryDelayMs * 2 ** Math.min(attempt - 1, 16));
      logger.warn({ work: key, attempt, delayMs }, `Reconciling ${key} failed (${error.message}); trying again.`);
      this.queue.addAfter(key, delayMs);
      return false;
    }
  }

  private async resync(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const slept = await this.d.clock.sleep(this.d.settings.resyncMs, signal).then(
        () => true,
        () => false,
      );
      if (!slept) return;
      if (this.cache.synced) for (const key of this.cache.everything()) this.queue.add(key);
    }
  }
}
