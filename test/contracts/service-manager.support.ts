import type { Clock } from '../../src/ports/clock.js';

/**
 * The adapter's clock, wrapped so that a case can act while the health wait sleeps between two
 * polls (the abort case): on the memory clock no timer could ever fire inside that wait.
 */
export class SteppedClock implements Clock {
  private readonly hooks: (() => void)[] = [];

  constructor(private readonly inner: Clock) {}

  nowMs(): number {
    return this.inner.nowMs();
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
  const deadlineMs = clock.nowMs() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (clock.nowMs() >= deadlineMs) return false;
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
  const endMs = clock.nowMs() + forMs;
  for (;;) {
    if (!(await probe())) return false;
    if (clock.nowMs() >= endMs) return true;
    await clock.sleep(pollMs);
  }
}
