import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 * V8's own factor reaches 4× when collections are cheap; the controller keeps about 30 MiB live
 * at 10,000 machines, but each plan of a busy rollout promotes a snapshot's worth of garbage, so
 * with the default its heap grew to ~120 MiB between collections and the process kept the pages
 * (peak RSS 184 MiB). At 1.5× the collections come more often and stay short (10–30 ms,
 * incremental), and the peak was 121 MiB: docs/benchmarks.md#controller.
 */
export const CONTROLLER_HEAP_GROWING_PERCENT = 50;

/**
 * Bounds the heap's growth for the rest of this process. V8 reads the flag whenever it sets the
 * next collection's limit, so setting it at run time takes effect from the next collection; it is
 * a V8 option NODE_OPTIONS refuses, so the process sets it itself.
 */
export function boundHeapGrowth(percent: number = CONTROLLER_HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${Math.max(1, Math.floor(percent))}`);
}
