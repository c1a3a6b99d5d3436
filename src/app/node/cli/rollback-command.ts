import { Command } from 'clipanion';
import { ExitCode } from '../../../domain/common/error-codes.js';
import { BaseCommand } from './base-command.js';
import { describeNode } from './render-activation.js';

export class RollbackCommand extends BaseCommand {
  static override paths = [['rollback']];

  static override usage = Command.Usage({
    description: 'Switch current back to the last-good binary, restart the agent and check its health.',
    details: `
      Takes the host lock. When current already names last-good's slot nothing changes. Refused
      while a managed upgrade record exists (the daemon rolls that one back itself).
      A last-good that does not come up healthy is quarantined and the binary that ran before is
      restored. On a terminal, a transient line names the health wait. Exit codes: 0 rolled back (or nothing to do), 1 failed with nothing changed,
      3 last-good failed and the previous binary runs again, 4 busy, 5 changed and then failed
      (the output says where the node stands).
    `,
    examples: [['Roll back to last-good', 'sudo $0 rollback']],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    // Not interruptible: a wait cut short would count as last-good failing and undo the rollback.
    const result = await this.withHealthLine(upgrader.value.config.agent.name, undefined, (onHealthProgress) =>
      upgrader.value.rollback({ onHealthProgress }),
    );
    if (!result.ok) return this.failWith(result.failure);
    const { value } = result;
    if (value.failure !== null) {
      const reverted = value.outcome === 'reverted';
      const text = reverted
        ? `Last-good (${value.to}) did not come up healthy${value.quarantined ? ' and is quarantined' : ''}; current is back on ${value.from}, which runs again.`
        : `Last-good (${value.to}) did not come up healthy, and going back to ${value.from} failed too. ${describeNode(value.node)}`;
      const error = {
        code: value.failure.code,
        message: value.failure.message,
        ...(reverted ? {} : { hostChanged: true }),
      };
      if (this.json) this.context.stdout.write(`${JSON.stringify({ ok: false, error, rollback: value })}\n`);
      else this.context.stderr.write(`agent-upgrade: ${value.failure.code}: ${text}\n`);
      return reverted ? ExitCode.rolledBack : ExitCode.changedThenFailed;
    }
    return this.succeed({ rollback: value }, [
      value.changed
        ? `Rolled back: current ${value.from} -> ${value.to}.${value.restarted ? ' The agent restarted and is healthy.' : ''}`
        : `Current already names last-good (${value.to}); nothing to do.`,
      ...value.brokenSlots.map((problem) => `Warning (${problem.code}): ${problem.message}.`),
    ]);
  }
}
