import type { Failure, Result } from '../../../domain/common/failure.js';
import { watchRemainingMs, type WatchOwner, type WatchWindow } from '../../../domain/node/record/watch-window.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';

/** An upgrade on trial in its watch window (docs/protocol.md#watch-window), as `status` shows it. */
export type WatchStatus =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly valid: true;
      readonly owner: WatchOwner;
      readonly candidate: SlotName;
      readonly windowMs: number;
      readonly watchedMs: number;
      readonly startedAt: string;
      /**
       * When the window ends if the candidate stays healthy and watched from now on: now plus
       * what is left. An estimate for people (the window itself counts watched time only).
       */
      readonly endsAbout: string;
    }
  | { readonly present: true; readonly valid: false; readonly problem: Failure };

/** The window as read (or why it could not be), seen at wall time `nowMs`. */
export function watchStatusOf(read: Result<WatchWindow | null>, nowMs: number): WatchStatus {
  if (!read.ok) return { present: true, valid: false, problem: read.failure };
  const window = read.value;
  if (window === null) return { present: false };
  return {
    present: true,
    valid: true,
    owner: window.owner,
    candidate: window.candidate,
    windowMs: window.windowMs,
    watchedMs: window.watchedMs,
    startedAt: window.startedAt,
    endsAbout: new Date(nowMs + watchRemainingMs(window)).toISOString(),
  };
}

/** The `Watch:` line of `status`. */
export function describeWatch(watch: WatchStatus): string {
  if (!watch.present) return 'none';
  if (!watch.valid) return `invalid: ${watch.problem.code} ${watch.problem.message}`;
  const path = watch.owner === 'managed' ? 'managed upgrade' : 'activation';
  return `${watch.candidate} on trial (${path}): ${seconds(watch.watchedMs)} of ${seconds(watch.windowMs)} watched, ends about ${watch.endsAbout}`;
}

function seconds(ms: number): string {
  return `${Math.floor(ms / 1000)} s`;
}
