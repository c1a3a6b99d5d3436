import { failure, type Result } from '../../../domain/common/failure.js';
import type { RolloutPhase } from '../../../domain/fleet/status/rollout-status.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { RolloutView } from './rollout-view.js';

/** Phases after which the controller does nothing more unless a person acts: the watch ends there. */
export const WATCH_ENDS: readonly RolloutPhase[] = ['Succeeded', 'Halted', 'Failed', 'Aborted', 'RolledBack'];

/** Reads in a row that may fail (the API server restarting, a network blip) before the watch gives up. */
export const WATCH_READ_FAILURES_MAX = 5;

export interface WatchOptions {
  /** Between two reads. */
  readonly pollMs: number;
  /** How long to watch at most; `null`: until the rollout ends or the signal aborts. */
  readonly timeoutMs: number | null;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Reads the rollout every `pollMs` and hands each view to `seen`, until its phase is one the
 * controller stops at (WATCH_ENDS): that view is the result. A rollout that does not exist, or
 * credentials that are refused, end the watch at once; other read failures are retried at the
 * next poll, WATCH_READ_FAILURES_MAX in a row at most. The timeout and the signal end it with
 * `E_TIMEOUT` and `E_INTERRUPTED`; a watch only reads, so nothing has changed either way.
 */
export async function watchRollout(
  read: () => Promise<Result<RolloutView>>,
  clock: Clock,
  options: WatchOptions,
  seen: (view: RolloutView) => void,
): Promise<Result<RolloutView>> {
  const deadlineMs = options.timeoutMs === null ? null : clock.monotonicMs() + options.timeoutMs;
  let failures = 0;
  for (;;) {
    const view = await read();
    if (view.ok) {
      failures = 0;
      seen(view.value);
      if (view.value.phase !== null && WATCH_ENDS.includes(view.value.phase)) return view;
    } else {
      failures += 1;
      if (!retryable(view.failure.code) || failures >= WATCH_READ_FAILURES_MAX) return view;
    }
    const leftMs = deadlineMs === null ? options.pollMs : deadlineMs - clock.monotonicMs();
    if (leftMs <= 0) return timedOut(options.timeoutMs ?? 0);
    try {
      await clock.sleep(Math.min(options.pollMs, leftMs), options.signal);
    } catch (error) {
      if (options.signal?.aborted === true) {
        return { ok: false, failure: failure('E_INTERRUPTED', 'the watch was interrupted; the rollout goes on') };
      }
      throw error;
    }
  }
}

function retryable(code: string): boolean {
  return code === 'E_CLUSTER' || code === 'E_NETWORK' || code === 'E_TIMEOUT';
}

function timedOut(timeoutMs: number): Result<RolloutView> {
  return {
    ok: false,
    failure: failure('E_TIMEOUT', `the rollout did not end within --timeout ${timeoutMs / 1000}s; it goes on`),
  };
}
