import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../../ports/common/clock.js';

export class SystemClock implements Clock {
  nowMs(): number {
    return Date.now();
  }

  /** CLOCK_MONOTONIC underneath (as node's timers): a wall-clock step moves neither. */
  monotonicMs(): number {
    return performance.now();
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await delay(ms, undefined, signal === undefined ? undefined : { signal });
  }
}
