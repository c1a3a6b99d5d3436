/** A replica campaigning for the Lease as RolloutController does, keeping when it believed it led. */
import { DEFAULT_EPOCH_MS } from '../../../src/adapters/common/memory/memory-clock.js';
import { LeaderElection, type LeaderSettings } from '../../../src/app/fleet/controller/leader-election.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import type { SteppedClock } from '../../support/stepped-clock.js';
import { quietLogger } from './controller-fixtures.js';
import { healthy, type MemoryLeaseStore, type ViewFault } from './memory-lease-store.js';

export const SETTINGS: Omit<LeaderSettings, 'identity'> = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface Term {
  /** Virtual milliseconds since the epoch of the shared clock. */
  readonly fromMs: number;
  toMs: number | null;
  outcome: 'lost' | 'stopped' | null;
}

/** The shared clock seen from a replica whose wall clock is `offsetMs` off (sleeps take as long). */
export function skewedClock(clock: SteppedClock, offsetMs: number): Clock {
  return {
    nowMs: () => clock.nowMs() + offsetMs,
    monotonicMs: () => clock.monotonicMs(),
    sleep: (ms, signal) => clock.sleep(ms, signal),
  };
}

export class Candidate {
  readonly fault: ViewFault = healthy();
  readonly election: LeaderElection;
  readonly terms: Term[] = [];
  private readonly stopper = new AbortController();
  private ended = false;

  constructor(
    readonly identity: string,
    store: MemoryLeaseStore,
    private readonly clock: SteppedClock,
    settings: Omit<LeaderSettings, 'identity'> = SETTINGS,
    ownClock: Clock = clock,
  ) {
    this.election = new LeaderElection(store.view(this.fault), ownClock, quietLogger(), { ...settings, identity });
  }

  get leading(): boolean {
    return this.terms.at(-1)?.toMs === null;
  }

  /** Acquire, hold, and campaign again after a loss, until `stop`. */
  campaign(): this {
    void (async () => {
      const signal = this.stopper.signal;
      try {
        while (await this.election.acquire(signal)) {
          const term: Term = { fromMs: this.elapsed(), toMs: null, outcome: null };
          this.terms.push(term);
          term.outcome = await this.election.hold(signal);
          term.toMs = this.elapsed();
          if (term.outcome === 'stopped') return;
        }
      } finally {
        this.ended = true;
      }
    })();
    return this;
  }

  /**
   * Stops campaigning (a crash: nothing handed back) and moves time until the campaign ended: a
   * call still on its way to the Lease finishes first.
   */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.clock.runUntil(() => this.ended, 1_000);
  }

  private elapsed(): number {
    return this.clock.nowMs() - DEFAULT_EPOCH_MS;
  }
}

/** Virtual milliseconds since the epoch of the shared clock. */
export function elapsed(clock: SteppedClock): number {
  return clock.nowMs() - DEFAULT_EPOCH_MS;
}

/** The last accepted write by `holder`, in elapsed milliseconds. */
export function lastWriteBy(store: MemoryLeaseStore, holder: string): number {
  const write = store.writes.filter((entry) => entry.holder === holder).at(-1);
  if (write === undefined) throw new Error(`${holder} never wrote the Lease`);
  return write.atMs - DEFAULT_EPOCH_MS;
}
