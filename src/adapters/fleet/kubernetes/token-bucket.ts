import type { Clock } from '../../../ports/common/clock.js';
import type { WritePacing } from '../../../ports/fleet/controller-cluster.js';

/** A Retry-After beyond this is not believed: a broken proxy must not stall the controller for a day. */
export const RETRY_AFTER_MAX_MS = 60_000;

/** What a write goes through before it is sent, and what a 429 answer tells it. */
export interface WritePacer {
  /** Resolves when the next write may be sent; waiters are served in order. */
  take(): Promise<void>;
  /** The API server answered 429 with Retry-After: no write is sent for that long. */
  throttled(retryAfterMs: number): void;
}

/**
 * A token bucket on the monotonic clock (client-go's `NewTokenBucketRateLimiter`): it starts
 * full with `burst` tokens and refills at `qps` a second; each write takes one. With no pacing it
 * hands out tokens at once, but a Retry-After still holds them back. Every wait is one sleep of
 * the Clock, taken by a single pump that serves the waiters in order, so a virtual clock
 * (the fleet simulation's) controls all of it.
 *
 * A 429 with Retry-After stops every write until then and empties the bucket, so the writes
 * after the pause come at `qps` instead of as a burst into a server that just said it is
 * overloaded. That is simpler than client-go, which retries the one throttled request after
 * Retry-After while the others go on: the server's overload concerns every write of this client,
 * and one shared pause is the simplest rule that never sends into it.
 */
export class TokenBucket implements WritePacer {
  private tokens: number;
  private refilledMs: number;
  private blockedUntilMs = Number.NEGATIVE_INFINITY;
  private readonly waiters: (() => void)[] = [];
  private pumping = false;

  constructor(
    private readonly clock: Pick<Clock, 'monotonicMs' | 'sleep'>,
    private readonly pacing: WritePacing | null,
  ) {
    this.tokens = pacing?.burst ?? 0;
    this.refilledMs = clock.monotonicMs();
  }

  take(): Promise<void> {
    if (this.waiters.length === 0 && this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      if (!this.pumping) void this.pump();
    });
  }

  throttled(retryAfterMs: number): void {
    const pauseMs = Math.min(RETRY_AFTER_MAX_MS, Number.isFinite(retryAfterMs) ? Math.max(0, retryAfterMs) : 0);
    this.refill();
    this.blockedUntilMs = Math.max(this.blockedUntilMs, this.clock.monotonicMs() + pauseMs);
    this.tokens = Math.min(this.tokens, 0);
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        if (this.tryTake()) (this.waiters.shift() as () => void)();
        else await this.clock.sleep(this.waitMs());
      }
    } finally {
      this.pumping = false;
    }
  }

  private tryTake(): boolean {
    if (this.clock.monotonicMs() < this.blockedUntilMs) return false;
    if (this.pacing === null) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Tokens accrue from the last refill, but never during a Retry-After pause. */
  private refill(): void {
    const nowMs = this.clock.monotonicMs();
    if (this.pacing === null) return;
    const fromMs = Math.max(this.refilledMs, this.blockedUntilMs);
    if (nowMs > fromMs)
      this.tokens = Math.min(this.pacing.burst, this.tokens + ((nowMs - fromMs) * this.pacing.qps) / 1_000);
    this.refilledMs = Math.max(this.refilledMs, nowMs);
  }

  /** Until the pause ends, or until the next whole token (rounded up to the millisecond, at least 1). */
  private waitMs(): number {
    const nowMs = this.clock.monotonicMs();
    if (nowMs < this.blockedUntilMs) return Math.max(1, Math.ceil(this.blockedUntilMs - nowMs));
    const qps = this.pacing?.qps ?? 1;
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1_000) / qps));
  }
}

/** No client-side limit and no pause: for adapters built without pacing (tests, tools). */
export const UNPACED: WritePacer = {
  take: () => Promise.resolve(),
  throttled: () => undefined,
};
