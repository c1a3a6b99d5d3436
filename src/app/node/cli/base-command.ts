import { Option } from 'clipanion';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import type { Result } from '../../../domain/common/failure.js';
import { OutputCommand } from '../../common/cli/output-command.js';
import type { HealthObserver } from '../health/health-progress.js';
import type { Upgrader } from '../upgrader.js';
import { HealthLine } from './health-line.js';
import type { NodeCliContext } from './node-cli-context.js';

/** The health line paces its redraws on real time. */
const CLOCK = new SystemClock();

/** The commands that act on this host: its configuration file and root. */
export abstract class BaseCommand extends OutputCommand<NodeCliContext> {
  config = Option.String('--config', {
    description: 'Configuration file (default: /etc/aks-flex-node/agent-upgrade.json when present)',
  });
  root = Option.String('--root', { description: 'Re-root every host path under DIR (sandboxes, demos, tests)' });

  protected async openUpgrader(): Promise<Result<Upgrader>> {
    const invalid = this.invalidLogLevel();
    if (invalid !== null) return { ok: false, failure: invalid };
    return this.context.openUpgrader({
      configPath: this.config,
      root: this.root,
      logLevel: this.logLevel,
      commandPath: this.path,
    });
  }

  /**
   * Runs `body` with the health wait shown on stderr when it is a terminal (never with `--json`,
   * never in a pipe or a log), and erased when `body` ends however it ends.
   */
  protected async withHealthLine<T>(
    agentName: string,
    signal: AbortSignal | undefined,
    body: (observe: HealthObserver | undefined) => Promise<T>,
  ): Promise<T> {
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const line =
      !this.json && stderr.isTTY === true ? new HealthLine(stderr, agentName, () => CLOCK.monotonicMs(), signal) : null;
    try {
      return await body(line?.observe);
    } finally {
      line?.finish();
    }
  }
}
