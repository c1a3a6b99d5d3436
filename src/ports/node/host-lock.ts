/**
 * The one lock serialising every host-changing path (docs/security.md#the-host). Implementations
 * must be released by the kernel when the holder dies, race-free under concurrent acquisition, and
 * non-blocking.
 */
export type LockHolder = KnownLockHolder | UnknownLockHolder;

/** A holder that described itself, with the kernel confirming that it is the one holding the lock. */
export interface KnownLockHolder {
  readonly kind: 'known';
  readonly pid: number;
  readonly command: string;
  readonly sinceMs: number;
}

/**
 * The lock is held, but by a process that left no description that can be trusted (another tool,
 * or a description left by an earlier, dead holder). `pid` is the holding process as the kernel
 * reports it, null when it is not visible from here (another pid namespace).
 */
export interface UnknownLockHolder {
  readonly kind: 'unknown';
  readonly pid: number | null;
}

export type LockAttempt =
  | { readonly kind: 'acquired'; readonly lease: LockLease }
  | { readonly kind: 'busy'; readonly holder: LockHolder | null };

export interface LockLease {
  /** Releases the lock. Idempotent. */
  release(): Promise<void>;
}

/**
 * Both methods throw LockError (src/domain/common/port-errors.ts) when the lock cannot be tried at all,
 * for instance when the lock path is not a regular file; a busy lock is not an error.
 */
export interface HostLock {
  /** Never waits: a held lock is reported as `busy` with its holder when known. */
  tryAcquire(): Promise<LockAttempt>;
  /** Who holds the lock now, or `null` when it is free. Does not take the lock. */
  holder(): Promise<LockHolder | null>;
}
