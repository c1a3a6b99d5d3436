import { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { LeaseRecord, LeaseStore, StoredLease } from '../../../ports/fleet/controller-cluster.js';
import type { Logger } from '../../../ports/common/logger.js';
import { messageOf } from '../../../domain/common/message-of.js';

export interface LeaderSettings {
  /** This replica's name in the Lease (the pod name). */
  readonly identity: string;
  /** How long a holder's lease counts after its last renewal was observed. */
  readonly leaseDurationMs: number;
  /** The leader gives up when it could not renew for this long (shorter than the lease). */
  readonly renewDeadlineMs: number;
  /** Between attempts to acquire or renew. */
  readonly retryPeriodMs: number;
}

/**
 * Leader election on a Lease, as client-go does it: a candidate takes the lease only when its
 * holder has not renewed it for a whole lease duration as observed on this replica's own
 * monotonic clock (so neither skew between replicas nor a step of the wall clock matters; the
 * Lease's times are wall-clock stamps for people), and every write is guarded by the
 * resourceVersion read just before, so of two candidates exactly one wins. The leader renews
 * every retry period and steps down when renewals failed for the renew deadline, before any
 * other replica can have taken over.
 */
export class LeaderElection {
  /** `atMs` and `renewedMs` are monotonic readings. */
  private observed: { readonly stored: StoredLease; readonly atMs: number } | null = null;
  /** When this replica's last successful write of the Lease was sent. */
  private renewedMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly leases: LeaseStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly settings: LeaderSettings,
  ) {}

  /** Tries until this replica leads (`true`) or `signal` aborts (`false`). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      if (await this.tryAcquireOrRenew()) return true;
      if (!(await this.pause(signal))) return false;
    }
  }

  /**
   * Renews until the renew deadline passes without a renewal (`lost`) or `signal` aborts
   * (`stopped`). The deadline counts from when the last successful write was sent (it cannot
   * have landed earlier, and a standby counts from when it saw it land) and is kept even while a
   * renewal goes unanswered, so this replica stops believing it leads before any other can start.
   */
  async hold(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    const { renewDeadlineMs, retryPeriodMs } = this.settings;
    for (;;) {
      const deadlineMs = this.renewedMs + renewDeadlineMs;
      const leftMs = deadlineMs - this.clock.monotonicMs();
      if (leftMs <= 0) return 'lost';
      if (!(await this.pause(signal, Math.min(retryPeriodMs, leftMs)))) return 'stopped';
      if (this.clock.monotonicMs() >= deadlineMs) return 'lost';
      const outcome = await this.renewBefore(deadlineMs, signal);
      if (outcome === 'lost' || outcome === 'stopped') return outcome;
    }
  }

  /** Hands the lease back (holder cleared, one-second lease) so a standby replica takes over at once. */
  async release(): Promise<void> {
    const observed = this.observed;
    if (observed === null || observed.stored.lease.holder !== this.settings.identity) return;
    const nowMs = this.clock.nowMs();
    const lease: LeaseRecord = { ...observed.stored.lease, holder: '', leaseDurationSeconds: 1, renewMs: nowMs };
    await this.leases.update(observed.stored.resourceVersion, lease).catch(() => undefined);
    this.observed = null;
  }

  /** One renewal, abandoned when the deadline passes first: an answer that late no longer counts. */
  private async renewBefore(
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<'renewed' | 'failed' | 'lost' | 'stopped'> {
    const timer = new AbortController();
    const stop = (): void => timer.abort();
    signal.addEventListener('abort', stop, { once: true });
    const attempt = this.tryAcquireOrRenew().then((renewed) => (renewed ? 'renewed' : 'failed'));
    // An abandoned attempt may still fail (refused credentials) when nobody waits for it any more.
    attempt.catch(() => undefined);
    const expiry = this.clock.sleep(deadlineMs - this.clock.monotonicMs(), timer.signal).then(
      () => 'lost' as const,
      () => 'stopped' as const,
    );
    try {
      return await Promise.race([attempt, expiry]);
    } finally {
      timer.abort();
      signal.removeEventListener('abort', stop);
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { identity, leaseDurationMs } = this.settings;
    const durationSeconds = Math.ceil(leaseDurationMs / 1000);
    try {
      const current = await this.leases.get();
      // Read after the answer: a change seen now landed no later than now, so a lease duration
      // counted from here never ends before the holder's own deadline.
      const nowMs = this.clock.nowMs();
      const seenMs = this.clock.monotonicMs();
      if (current === null) {
        const lease = {
          holder: identity,
          leaseDurationSeconds: durationSeconds,
          acquireMs: nowMs,
          renewMs: nowMs,
          transitions: 0,
        };
        return this.record(await this.leases.create(lease), seenMs);
      }
      if (this.observed?.stored.resourceVersion !== current.resourceVersion)
        this.observed = { stored: current, atMs: seenMs };
      const { lease } = current;
      const heldByOther = lease.holder !== '' && lease.holder !== identity;
      if (heldByOther && this.observed.atMs + lease.leaseDurationSeconds * 1000 > seenMs) return false;
      const next: LeaseRecord =
        lease.holder === identity
          ? { ...lease, leaseDurationSeconds: durationSeconds, renewMs: nowMs }
          : {
              holder: identity,
              leaseDurationSeconds: durationSeconds,
              acquireMs: nowMs,
              renewMs: nowMs,
              transitions: lease.transitions + 1,
            };
      return this.record(await this.leases.update(current.resourceVersion, next), seenMs);
    } catch (error) {
      // Refused credentials do not get better by waiting: the controller stops (E_CLUSTER_AUTH).
      if (error instanceof ClusterError && error.code === 'unauthorized') throw error;
      this.logger.warn({ identity }, `Leader election: the Lease could not be read or written (${messageOf(error)}).`);
      return false;
    }
  }

  /** `sentMs`: when the write was sent (monotonic), the earliest it can have landed. */
  private record(outcome: Awaited<ReturnType<LeaseStore['create']>>, sentMs: number): boolean {
    if (outcome.kind === 'conflict') return false;
    this.observed = { stored: outcome.lease, atMs: this.clock.monotonicMs() };
    this.renewedMs = sentMs;
    return true;
  }

  private pause(signal: AbortSignal, ms = this.settings.retryPeriodMs): Promise<boolean> {
    return this.clock.sleep(ms, signal).then(
      () => true,
      () => false,
    );
  }
}
