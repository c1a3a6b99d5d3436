/**
 * The one lock serialising every host-changing path (SPEC §6). Implementations must be released
 * by the kernel when the holder dies, race-free under concurrent acquisition, and non-blocking.
 */
export interface LockHolder {
  readonly pid: number;
  readonly command: string;
  readonly sinceMs: number;
}

export type LockAttempt =
  | { readonly kind: 'acquired'; readonly lease: LockLease }
  | { readonly kind: 'busy'; readonly holder: LockHolder | null };

export interface LockLease {
  /** Releases the lock. Idempotent. */
  release(): Promise<void>;
}

export interface HostLock {
  /** Never waits: a held lock is reported as `busy` with its holder when known. */
  tryAcquire(): Promise<LockAttempt>;
  /** Who holds the lock now, or `null` when it is free. Does not take the lock. */
  holder(): Promise<LockHolder | null>;
}
