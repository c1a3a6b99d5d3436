import type { Clock } from '../../../ports/common/clock.js';
import type { HostLock, LockHolder } from '../../../ports/node/host-lock.js';

/** How often a bounded wait for the host lock tries again. */
const LOCK_POLL_MS = 1000;

export type LockedRun<T> =
  { readonly kind: 'ran'; readonly value: T } | { readonly kind: 'busy'; readonly holder: LockHolder | null };

export interface LockWait {
  readonly clock: Clock;
  /** How long to keep trying a busy lock; it is then reported busy. */
  readonly waitMs: number;
}

/**
 * Runs `body` holding the host lock and releases it however `body` ends. A busy lock is an
 * outcome, not an error: each caller decides what busy means (refuse, requeue, retry the gate).
 * With `wait`, a busy lock is tried again until the deadline on the clock.
 */
export async function withHostLock<T>(lock: HostLock, body: () => Promise<T>, wait?: LockWait): Promise<LockedRun<T>> {
  const deadlineMs = wait === undefined ? null : wait.clock.monotonicMs() + wait.waitMs;
  for (;;) {
    const attempt = await lock.tryAcquire();
    if (attempt.kind === 'acquired') {
      try {
        return { kind: 'ran', value: await body() };
      } finally {
        await attempt.lease.release();
      }
    }
    if (wait === undefined || deadlineMs === null || wait.clock.monotonicMs() >= deadlineMs) {
      return { kind: 'busy', holder: attempt.holder };
    }
    await wait.clock.sleep(LOCK_POLL_MS);
  }
}

/** `pid 12 (agent-upgrade daemon)`, for an E_LOCK_BUSY message. */
export function describeHolder(holder: LockHolder | null): string {
  if (holder === null) return 'another process';
  if (holder.kind === 'known') return `pid ${holder.pid} (${holder.command})`;
  return holder.pid === null ? 'a process not visible from here' : `pid ${holder.pid} (unknown process)`;
}
