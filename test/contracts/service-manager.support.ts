import type { Clock } from '../../src/ports/common/clock.js';

/**
 * The adapter's clock, wrapped so that a case can act while the health wait sleeps between two
 * polls (the abort case): on the memory clock no timer could ever fire inside that wait. Its
 * wall clock can be stepped (as NTP or `date -s` would) without touching the host's.
 */
export class SteppedClock implements Clock {
  private readonly hooks: (() => void)[] = [];
  private wallOffsetMs = 0;

  constructor(private readonly inner: Clock) {}

  nowMs(): number {
    return this.inner.nowMs() + this.wallOffsetMs;
  }

  /** Sets the wall clock `deltaMs` forward (or back, when negative); the monotonic clock does not move. */
  stepWall(deltaMs: number): void {
    this.wallOffsetMs += deltaMs;
  }

  monotonicMs(): number {
    return this.inner.monotonicMs();
  }

  /** Runs `hook` when the next sleep begins, i.e. right after a poll. */
  duringNextSleep(hook: () => void): void {
    this.hooks.push(hook);
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    for (const hook of this.hooks.splice(0)) hook();
    await this.inner.sleep(ms, signal);
  }
}

/** Polls `probe` on `clock` until it holds; false once `timeoutMs` passed (every wait is bounded). */
export async function within(
  clock: Clock,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  pollMs = 100,
): Promise<boolean> {
  const deadlineMs = clock.monotonicMs() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (clock.monotonicMs() >= deadlineMs) return false;
    await clock.sleep(pollMs);
  }
}

/** Whether `probe` holds at every poll for `forMs`: for what must not happen, there is no event to wait on. */
export async function holdsFor(
  clock: Clock,
  probe: () => Promise<boolean>,
  forMs: number,
  pollMs = 100,
): Promise<boolean> {
  const endMs = clock.monotonicMs() + forMs;
  for (;;) {
    if (!(await probe())) return false;
    if (clock.monotonicMs() >= endMs) return true;
    await clock.sleep(pollMs);
  }
}
