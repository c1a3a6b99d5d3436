import type { HostLock, LockAttempt, LockHolder } from '../../ports/host-lock.js';

/**
 * The host lock in memory: one holder at a time. A simulated process death releases it, as the
 * kernel releases a flock; a simulated reboot simply starts with a new instance.
 */
export class MemoryHostLock implements HostLock {
  private held: LockHolder | null = null;

  constructor(private readonly nowMs: () => number = () => 0) {}

  async tryAcquire(holder: Omit<LockHolder, 'sinceMs'> = { pid: 1, command: 'memory' }): Promise<LockAttempt> {
    if (this.held !== null) return { kind: 'busy', holder: this.held };
    const mine: LockHolder = { ...holder, sinceMs: this.nowMs() };
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
    return this.held;
  }

  /** The holding process died: the kernel would drop its lock. */
  releaseAfterDeath(): void {
    this.held = null;
  }
}
