import type { BaseContext } from 'clipanion';
import type { Result } from '../../domain/failure.js';
import type { Logger } from '../../ports/logger.js';
import type { HostIdentity } from '../host-identity.js';
import type { Upgrader } from '../upgrader.js';

export interface GlobalOptions {
  readonly configPath: string | undefined;
  readonly root: string | undefined;
  readonly logLevel: string;
  /**
   * The command's words as the parser matched them (`install`, `rollout status`): what the lock
   * file and `status` name as the holder. Never the raw argv, whose options may carry a URL's
   * secret in any position.
   */
  readonly commandPath: readonly string[];
}

/** What every command receives: the standard streams and a way to build the use cases. */
export interface CliContext extends BaseContext {
  openUpgrader(options: GlobalOptions): Promise<Result<Upgrader>>;
  /** Who this process is and where it logs, for commands that build their own sandbox (demo). */
  host(
    logLevel: string,
    commandPath: readonly string[],
  ): Promise<{ readonly identity: HostIdentity; readonly logger: Logger }>;
  /**
   * Starts listening for SIGINT, SIGTERM and SIGHUP until `dispose`: the signal aborts. Absent
   * where the process's signals are not the command's (tests running the CLI in memory).
   */
  interrupts?(): { readonly signal: AbortSignal; dispose(): void };
}
