import type { BaseContext } from 'clipanion';
import type { Logger } from '../../../ports/common/logger.js';

/** What every command receives, node or fleet: the standard streams, a logger, the process's signals. */
export interface CliContext extends BaseContext {
  /** This process's logger on stderr, at `logLevel` (a valid level; the command checked it). */
  logger(logLevel: string): Promise<Logger>;
  /**
   * Starts listening for SIGINT, SIGTERM and SIGHUP until `dispose`: the signal aborts. Absent
   * where the process's signals are not the command's (tests running the CLI in memory).
   */
  interrupts?(): { readonly signal: AbortSignal; dispose(): void };
}
