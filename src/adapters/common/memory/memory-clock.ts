import type { Clock } from '../../../ports/common/clock.js';

/** 2025-01-01T00:00:00Z: a fixed default so that timestamps in simulations are reproducible. */
export const DEFAULT_EPOCH_MS = Date.UTC(2025, 0, 1);

/**
 * Virtual time for simulations. `sleep` advances the clock by the requested amount and returns
 * at once, so bounded waits (docs/protocol.md#i10) cost no real time and every run is
 * deterministic; the sleep log lets a simulation check that waits stay bounded. `stepWall` moves
 * the wall clock alone, either way, as NTP or `date -s` would.
 */
export class MemoryClock implements Clock {
  private wall: number;
  private monotonic = 0;
  private sleeps = 0;
  private slept = 0;

  constructor(epochMs: number = DEFAULT_EPOCH_MS) {
    assertDuration(epochMs, 'epochMs');
    this.wall = epochMs;
  }

  nowMs(): number {
    return this.wall;
  }

  monotonicMs(): number {
    return this.monotonic;
  }

  /** Time passes: both clocks move forward (never back). */
  advance(ms: number): void {
    assertDuration(ms, 'ms');
    this.wall += ms;
    this.monotonic += ms;
  }

  /** The wall clock is set (`deltaMs` may be negative); the monotonic clock does not move. */
  stepWall(deltaMs: number): void {
    if (!Number.isFinite(deltaMs)) throw new RangeError('deltaMs must be finite');
    this.wall = Math.max(0, this.wall + deltaMs);
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    // Negative or NaN delays behave like a zero timer, as node's timers do.
    const duration = Number.isFinite(ms) && ms > 0 ? ms : 0;
    this.wall += duration;
    this.monotonic += duration;
    this.sleeps += 1;
    this.slept += duration;
    // One microtask turn lets a concurrent task abort "during" the sleep, as it could in real time.
    await Promise.resolve();
    signal?.throwIfAborted();
  }

  /** How many times `sleep` was called (aborted-before-start calls excluded). */
  get sleepCount(): number {
    return this.sleeps;
  }

  /** Total virtual milliseconds spent in `sleep`. */
  get sleptMs(): number {
    return this.slept;
  }
}

function assertDuration(value: number, name: string): void {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite, non-negative number`);
}
