import { failure } from '../../../domain/common/failure.js';
import { retryDelayMs } from '../../../domain/node/daemon/retry-policy.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ManagedSession } from '../managed/managed-session.js';
import { messageOf } from '../../../domain/common/message-of.js';

/** How a failed version report is classified for its backoff (5 s doubling to 5 min). */
const RETRYABLE = { kind: 'retryable-failure', failure: failure('E_CLUSTER', 'the version report failed') } as const;

/**
 * Tries a failed agent-version report again beside the daemon's work, with the retry policy's
 * backoff, until it is written (or settled) or the daemon stops. One loop at most; `ensure` after
 * every opened gate starts it when the session's report is pending. It never holds the host lock
 * and never fails the daemon: a defect in it is logged and ends only the retries.
 */
export class VersionReportRetry {
  private running: Promise<void> | null = null;
  private readonly stop = new AbortController();

  constructor(
    private readonly session: ManagedSession,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  ensure(): void {
    if (this.running !== null || this.stop.signal.aborted || !this.session.versionReportPending) return;
    this.running = this.loop()
      .catch((error: unknown) => {
        this.logger.error({}, `Retrying the agent version report stopped: ${messageOf(error)}`);
      })
      .finally(() => {
        this.running = null;
      });
  }

  /** Ends the retries (the daemon stops, or hands over to its restarted self) and waits for them. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    for (let failures = 1; this.session.versionReportPending; failures += 1) {
      const delayMs = retryDelayMs(RETRYABLE, failures) ?? 0;
      const woke = await this.clock.sleep(delayMs, this.stop.signal).then(
        () => true,
        () => false,
      );
      if (!woke || this.stop.signal.aborted) return;
      const result = await this.session.retryVersionReport();
      if (!result.ok) throw new Error(result.failure.message);
    }
  }
}
