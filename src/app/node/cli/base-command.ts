import { Option } from 'clipanion';
import type { Result } from '../../../domain/common/failure.js';
import { OutputCommand } from '../../common/cli/output-command.js';
import type { Upgrader } from '../upgrader.js';
import type { NodeCliContext } from './node-cli-context.js';

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
}
