import { Command, Option } from 'clipanion';
import { BaseCommand } from './base-command.js';

export class RecoverCommand extends BaseCommand {
  static override paths = [['recover']];

  static override usage = Command.Usage({
    description: 'Recover from a crash-looping upgraded agent (run by the OnFailure recovery unit).',
    details: `
      The recovery script runs this through the last-good binary when systemd gave up on the
      agent. Without a pending managed upgrade it changes nothing and exits 0: an ordinary agent
      failure must not change the selected binary. With one, it records the failure (keeping an
      earlier one), points current back at last-good when the candidate may be what runs,
      restores the container copy, and restarts the agent unit; the restarted daemon publishes
      Failed. Running it twice equals running it once. If a live upgrader holds the host lock,
      it waits at most twice the health timeout, then exits 4 without changes. With --failed-run
      (the recovery script passes systemd's $MONITOR_INVOCATION_ID), it also changes nothing when
      the agent unit was started again since that run failed: the failure was handled meanwhile.
    `,
    examples: [
      [
        'As the recovery script runs it',
        '/usr/local/lib/aks-flex-node/aks-flex-node-last-good recover --message "upgraded daemon failed repeatedly"',
      ],
    ],
  });

  message = Option.String('--message', '', {
    description: 'Why recovery ran (recorded as the failure, URLs redacted)',
  });

  failedRun = Option.String('--failed-run', {
    description: "The agent unit's failed run ($MONITOR_INVOCATION_ID): nothing is done if it was started since",
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const result = await upgrader.value.recover({ message: this.message, failedRun: this.failedRun || null });
    if (!result.ok) return this.failWith(result.failure);
    const { value } = result;
    return this.succeed({ recover: value }, [
      value.recovered
        ? `Recovered the pending upgrade${value.rolledBackTo === null ? '' : `; current -> ${value.rolledBackTo}`}. The agent was restarted.`
        : 'Nothing to recover: no pending upgrade, or the agent was started again since it failed.',
    ]);
  }
}
