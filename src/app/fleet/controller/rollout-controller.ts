import type { TufTrustSettings } from '../../../domain/common/trust/trust-settings.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ControllerCluster, LeaseStore } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import { ControllerLoop, type LoopSettings } from './controller-loop.js';
import { LeaderElection, type LeaderSettings } from './leader-election.js';
import type { ControllerTrust } from './release-verifier.js';
import type { MetricsQuery } from '../../../ports/fleet/metrics-query.js';

export interface ControllerSettings {
  readonly leader: LeaderSettings;
  readonly loop: LoopSettings;
  /** The `trust` section of `--config`: releases are verified against it before dispatch. Absent: none. */
  readonly trust?: TufTrustSettings | null;
}

export interface ControllerDeps {
  readonly cluster: ControllerCluster;
  readonly leases: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly settings: ControllerSettings;
  /** Signed releases (`--config` with a `trust` section); absent or null: releases are not verified. */
  readonly trust?: ControllerTrust | null;
  /** Prometheus, for the waves' analyses; absent: every measurement is an error. */
  readonly metricsQuery?: MetricsQuery;
}

/**
 * `agent-upgrade controller`: campaigns for the Lease, and while it leads runs the reconcile
 * loop over fresh informer caches (a new term starts from a fresh list: nothing is carried over
 * but what is in the cluster). Losing the lease ends the term at once, before any other replica
 * can have taken over, and the replica campaigns again. On shutdown it hands the lease back.
 */
export class RolloutController {
  private term: ControllerLoop | null = null;

  constructor(private readonly d: ControllerDeps) {}

  /** Serving: a standby replica is ready; a leader once its caches are filled. */
  get ready(): boolean {
    return this.term === null || this.term.cache.synced;
  }

  /** The current term's loop, while this replica leads (a simulation reads its idleness). */
  get loop(): ControllerLoop | null {
    return this.term;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { leases, clock, logger, metrics, settings } = this.d;
    const election = new LeaderElection(leases, clock, logger, settings.leader);
    const identity = settings.leader.identity;
    try {
      while (await election.acquire(signal)) {
        logger.info({ identity }, 'Leading: reconciling rollouts.');
        metrics.leading(true);
        const outcome = await this.lead(election, signal);
        metrics.leading(false);
        if (outcome === 'stopped') break;
        logger.warn({ identity }, 'Lost the leader Lease: stopped acting; campaigning again.');
      }
    } finally {
      this.term = null;
      await election.release();
    }
  }

  private async lead(election: LeaderElection, signal: AbortSignal): Promise<'lost' | 'stopped'> {
    const term = new AbortController();
    const end = (): void => term.abort();
    signal.addEventListener('abort', end, { once: true });
    const loop = new ControllerLoop({ ...this.d, settings: this.d.settings.loop });
    this.term = loop;
    const holding = election.hold(term.signal).finally(end);
    // When the loop fails first nobody awaits the hold: its own failure must not go unhandled.
    holding.catch(() => undefined);
    try {
      await loop.run(term.signal);
    } finally {
      end();
      this.term = null;
      signal.removeEventListener('abort', end);
    }
    const held = await holding;
    return signal.aborted ? 'stopped' : held;
  }
}
