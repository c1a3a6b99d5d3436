import type { Result } from '../../../domain/common/failure.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { CliContext } from '../../common/cli/cli-context.js';
import type { HostIdentity } from '../host-identity.js';
import type { Upgrader } from '../upgrader.js';

export interface GlobalOptions {
  readonly configPath: string | undefined;
  readonly root: string | undefined;
  readonly logLevel: string;
  /**
   * The command's words as the parser matched them (`install`, `status`): what the lock file and
   * `status` name as the holder. Never the raw argv, whose options may carry a URL's secret in
   * any position.
   */
  readonly commandPath: readonly string[];
}

/** What the commands that act on this host receive: a way to build the node's use cases. */
export interface NodeCliContext extends CliContext {
  openUpgrader(options: GlobalOptions): Promise<Result<Upgrader>>;
  /** Who this process is and where it logs, for commands that build their own sandbox (demo). */
  host(
    logLevel: string,
    commandPath: readonly string[],
  ): Promise<{ readonly identity: HostIdentity; readonly logger: Logger }>;
}
