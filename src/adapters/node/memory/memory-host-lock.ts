import { LockError } from '../../../domain/common/port-errors.js';
import type { HostLock, KnownLockHolder, LockAttempt, LockHolder } from '../../../ports/node/host-lock.js';

/** What can be at the lock path instead of a usable lock file; each makes the lock unusable. */
export const LOCK_PATH_FAULTS = ['fifo', 'symlink', 'not-regular'] as const;
export type LockPathFault = (typeof LOCK_PATH_FAULTS)[number];

/**
 * The host lock in memory: one holder at a time. A simulated process death releases it, as the
 * kernel releases a flock; a simulated reboot simply starts with a new instance. A lock path
 * fault makes both methods throw LockError "unavailable", as the flock adapter does, until it is
 * cleared; an existing lease can still be released.
 */
export class MemoryHostLock implements HostLock {
  private held: KnownLockHolder | null = null;
  private fault: LockPathFault | null = null;

  constructor(private readonly nowMs: () => number = () => 0) {}

  async tryAcquire(
    holder: { readonly pid: number; readonly command: string } = { pid: 1, command: 'memory' },
  ): Promise<LockAttempt> {
    this.refuseIfFaulty();
    if (this.held !== null) return { kind: 'busy', holder: this.held };
    const mine: KnownLockHolder = { kind: 'known', ...holder, sinceMs: this.nowMs() };
    this.held = mine;
    return {
      kind: 'acquired',
      lease: {
        release: async () => {
          if (this.held === mine) this.held = null;
        },
      },
    };
  }

  async holder(): Promise<LockHolder | null> {
    this.refuseIfFaulty();
    return this.held;
  }

  /** The holding process died: the kernel would drop its lock. */
  releaseAfterDeath(): void {
    this.held = null;
  }

  /** Puts something unusable at the lock path, or (with `null`) a usable lock file again. */
  setPathFault(fault: LockPathFault | null): void {
    this.fault = fault;
  }

  private refuseIfFaulty(): void {
    if (this.fault !== null)
      throw new LockError('unavailable', `the host lock is unusable: the lock path is a ${this.fault}`);
  }
}
