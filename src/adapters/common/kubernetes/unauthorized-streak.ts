import { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import { isAuthenticationFailure } from './credential-error.js';
import { messageOf } from '../../../domain/common/message-of.js';

export interface UnauthorizedLimit {
  /** Authentication failures with no success in between… */
  readonly attempts: number;
  /** …spanning at least this long, make the credentials count as invalid. */
  readonly windowMs: number;
}

/**
 * Counts authentication failures (401s after the credentials were read again, or no credentials
 * to send) since the last request that worked. Other failures (unreachable, 5xx, 403) neither
 * count nor reset: they say nothing about the credentials. When the limit is reached the
 * credentials are not going to work by waiting, and retrying them forever would leave the node
 * silently taking no upgrades: `check` then throws a ClusterError with code `unauthorized`.
 */
export class UnauthorizedStreak {
  private failures = 0;
  private sinceMs: number | null = null;

  constructor(
    private readonly limit: UnauthorizedLimit,
    private readonly clock: Clock,
  ) {}

  succeeded(): void {
    this.failures = 0;
    this.sinceMs = null;
  }

  /** Records how a request ended (`null`: it worked). */
  record(error: unknown): void {
    if (error === null) this.succeeded();
    else if (isAuthenticationFailure(error)) {
      this.failures += 1;
      this.sinceMs ??= this.clock.monotonicMs();
    }
  }

  /** Throws once the limit is reached; `last` is the latest failure, quoted in the error. */
  check(last: unknown): void {
    if (this.sinceMs === null || this.failures < this.limit.attempts) return;
    const spanMs = this.clock.monotonicMs() - this.sinceMs;
    if (spanMs < this.limit.windowMs) return;
    throw new ClusterError(
      401,
      `the API server refused this machine's credentials ${this.failures} times over ${Math.round(spanMs / 1000)} s, ` +
        `re-read before every attempt (last: ${messageOf(last)}); fix the credentials and restart the daemon`,
      'unauthorized',
    );
  }
}
