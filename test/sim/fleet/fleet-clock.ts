/**
 * Virtual time for a whole simulated fleet: thousands of daemons, a controller and its leader
 * election sleep on it at once. Time moves only when the caller says the system has settled, and
 * then to the earliest deadline, waking every sleeper due at that instant together (a binary heap
 * keeps that cheap with 10,000 sleepers; a sorted list per step would not).
 */
import type { Clock } from '../../../src/ports/common/clock.js';

interface Timer {
  readonly atMs: number;
  readonly order: number;
  readonly wake: () => void;
  cancelled: boolean;
}

export class FleetClock implements Clock {
  private now: number;
  private readonly heap: Timer[] = [];
  private order = 0;

  constructor(startMs: number) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  /** The wall clock of the simulated fleet never steps, so it serves as the monotonic one too. */
  monotonicMs(): number {
    return this.now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) return reject(signal.reason);
      const onAbort = (): void => {
        timer.cancelled = true;
        reject(signal?.reason);
      };
      const timer: Timer = {
        atMs: this.now + (Number.isFinite(ms) && ms > 0 ? ms : 0),
        order: (this.order += 1),
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        cancelled: false,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.push(timer);
    });
  }

  /** The next instant something wakes, or `null` when nothing sleeps. */
  nextDeadline(): number | null {
    this.dropCancelled();
    return this.heap[0]?.atMs ?? null;
  }

  /** Moves to the earliest deadline (never past `limitMs`) and wakes everything due then; how many woke. */
  advance(limitMs = Number.POSITIVE_INFINITY): number {
    const next = this.nextDeadline();
    if (next === null || next > limitMs) return 0;
    this.now = Math.max(this.now, next);
    let woken = 0;
    while (this.heap.length > 0 && (this.heap[0] as Timer).atMs <= this.now) {
      const timer = this.pop();
      if (timer.cancelled) continue;
      timer.wake();
      woken += 1;
    }
    return woken;
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && (this.heap[0] as Timer).cancelled) this.pop();
  }

  private before(a: Timer, b: Timer): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order);
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(heap[index] as Timer, heap[parent] as Timer)) break;
      [heap[index], heap[parent]] = [heap[parent] as Timer, heap[index] as Timer];
      index = parent;
    }
  }

  private pop(): Timer {
    const heap = this.heap;
    const top = heap[0] as Timer;
    const last = heap.pop() as Timer;
    if (heap.length > 0) {
      heap[0] = last;
      let index = 0;
      for (;;) {
        const left = index * 2 + 1;
        const right = left + 1;
        let smallest = index;
        if (left < heap.length && this.before(heap[left] as Timer, heap[smallest] as Timer)) smallest = left;
        if (right < heap.length && this.before(heap[right] as Timer, heap[smallest] as Timer)) smallest = right;
        if (smallest === index) break;
        [heap[index], heap[smallest]] = [heap[smallest] as Timer, heap[index] as Timer];
        index = smallest;
      }
    }
    return top;
  }
}
