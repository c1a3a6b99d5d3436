import { Command } from 'clipanion';
import { BaseCommand } from './base-command.js';

export class RollbackCommand extends BaseCommand {
  static override paths = [['rollback']];

  static override usage = Command.Usage({
    description: 'Switch current back to the last-good binary, restart the agent and check its health.',
    details: `
      Takes the host lock. When current already names last-good's slot nothing changes. Refused
      while a managed upgrade record exists (the daemon rolls that one back itself).
      Exit codes: 0 rolled back (or nothing to do), 1 failed, 4 busy.
    `,
    examples: [['Roll back to last-good', 'sudo $0 rollback']],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const result = await upgrader.value.rollback();
    if (!result.ok) return this.failWith(result.failure);
    const { value } = result;
    return this.succeed(
      { rollback: value },
      [value.changed ? `Rolled back: current ${value.from} -> ${value.to}.${value.restarted ? ' The agent restarted and is healthy.' : ''}` : `Current already names last-good (${value.to}); nothing to do.`],
    );
  }
}
