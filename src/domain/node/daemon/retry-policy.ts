import type { ErrorCode } from '../../common/error-codes.js';
import type { Failure } from '../../common/failure.js';

/**
 * How the daemon's work ends, in the vocabulary of a reconciler: done, try again after a known
 * delay (a busy lock, a stuck gate), a failure worth retrying with backoff, or a failure that
 * retrying cannot fix (the daemon then stops, so its service manager restarts it and the failure
 * shows). Every delay the managed path waits lives here.
 */
export type WorkOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeue-after'; readonly afterMs: number }
  | { readonly kind: 'retryable-failure'; readonly failure: Failure }
  | { readonly kind: 'terminal-failure'; readonly failure: Failure };

export const RETRY_POLICY = Object.freeze({
  /** A busy host lock (a direct activation, `recover`) is tried again after this long. */
  lockBusyMs: 5_000,
  /** A startup gate whose publication kept failing runs again after this long. */
  gateStuckMs: 5_000,
  /** The first retry of a failed attempt; each further failure doubles it, up to the cap. */
  failureFirstMs: 5_000,
  failureMaxMs: 300_000,
  /** Inside one gate run: the first pause between publication attempts (doubling). */
  publishFirstMs: 1_000,
});

/** Codes no retry can fix: the process is misconfigured for this host, or its cluster credentials stay refused. */
const TERMINAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'E_CONFIG',
  'E_WRONG_ARCH',
  'E_USAGE',
  'E_CLUSTER_AUTH',
]);

/** A failed attempt, classified: retried with backoff unless no retry can fix it. */
export function failureOutcome(failure: Failure): WorkOutcome {
  return TERMINAL_CODES.has(failure.code)
    ? { kind: 'terminal-failure', failure }
    : { kind: 'retryable-failure', failure };
}

/**
 * When to try again, or `null` for never. `failures` counts the consecutive failed attempts of
 * this work item, this one included (1 for the first failure).
 */
export function retryDelayMs(outcome: WorkOutcome, failures: number): number | null {
  switch (outcome.kind) {
    case 'done':
    case 'terminal-failure':
      return null;
    case 'requeue-after':
      return outcome.afterMs;
    case 'retryable-failure': {
      const doublings = Math.min(Math.max(failures - 1, 0), 30);
      return Math.min(RETRY_POLICY.failureFirstMs * 2 ** doublings, RETRY_POLICY.failureMaxMs);
    }
  }
}
