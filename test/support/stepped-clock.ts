import type { Clock } from '../../src/ports/common/clock.js';
import { DEFAULT_EPOCH_MS } from '../../src/adapters/common/memory/memory-clock.js';

/** About a second of real time for off-thread work before a run counts as stuck. */
const IDLE_ROUNDS_MAX = 400;

interface Timer {
  readonly atMs: number;
  readonly resolve: () => void;
}

/** A few turns of the event loop, with a moment of real time for work off the main thread (zlib). */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 2));
  for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Virtual time for concurrent activities (a daemon loop and the test driving it): `sleep` waits
 * until `runUntil` moves time to its deadline, so one activity's waits never run ahead of the
 * others' as they do on the memory clock, which advances at every sleep.
 */
export class SteppedClock implements Clock {
  private now = DEFAULT_EPOCH_MS;
  private timers: Timer[] = [];

  nowMs(): number {
    return this.now;
  }

  monotonicMs(): number {
    return this.now - DEFAULT_EPOCH_MS;
  }

  /** How many activities sleep now, waiting for time to move. */
  get sleepers(): number {
    return this.timers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason);
      const timer: Timer = {
        atMs: this.now + (Number.isFinite(ms) && ms > 0 ? ms : 0),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.timers = this.timers.filter((entry) => entry !== timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /**
   * Lets every ready activity run, then moves time to the earliest deadline and wakes its sleeper,
   * until `done()` holds. Throws when nothing is left to wake or the step bound is reached.
   */
  async runUntil(done: () => boolean, stepsMax = 5_000): Promise<void> {
    for (let step = 0; step < stepsMax; step += 1) {
      await settle();
      if (done()) return;
      const next = [...this.timers].sort((a, b) => a.atMs - b.atMs)[0];
      if (next === undefined) {
        // Work off the main thread (zlib) may still be running: give it real time, bounded.
        if (await this.idleWhile(() => !done() && this.timers.length === 0)) continue;
        throw new Error(`stuck at +${this.now - DEFAULT_EPOCH_MS} ms: nothing sleeps and the condition does not hold`);
      }
      this.timers = this.timers.filter((entry) => entry !== next);
      this.now = Math.max(this.now, next.atMs);
      next.resolve();
    }
    throw new Error(`the condition did not hold within ${stepsMax} steps`);
  }

  /** Settles up to a bound while `waiting` holds; true once it no longer does. */
  private async idleWhile(waiting: () => boolean): Promise<boolean> {
    for (let round = 0; round < IDLE_ROUNDS_MAX; round += 1) {
      if (!waiting()) return true;
      await settle();
    }
    return !waiting();
  }
}
