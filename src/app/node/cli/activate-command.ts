import { resolve } from 'node:path';
import { Command, Option } from 'clipanion';
import { ExitCode } from '../../../domain/common/error-codes.js';
import type { ActivationResult } from '../activation/activation-report.js';
import { BaseCommand } from './base-command.js';
import { renderActivation, renderPreflight } from './render-activation.js';

/** Options and output shared by `activate` and `install`. */
export abstract class ActivationCommandBase extends BaseCommand {
  preflight = Option.Boolean('--preflight', false, { description: 'Print the plan and change nothing' });
  version = Option.String('--version', { description: 'The version the candidate must report' });
  allowDowngrade = Option.Boolean('--allow-downgrade', false, {
    description: 'Accept a version older than the current one',
  });
  force = Option.Boolean('--force', false, { description: 'Accept a candidate that failed before (quarantined)' });

  /** A rolled-back activation is a failure with exit code 3; one that could not go back, 5. */
  protected reportActivation(result: ActivationResult): number {
    if (result.ok) return this.succeed({ activation: result.value }, renderActivation(result.value));
    const report = result.activation;
    if (report === null) return this.failWith(result.failure);
    const rolledBack = report.outcome === 'rolled-back';
    if (this.json) {
      const { code, message, hostChanged } = result.failure;
      const error = { code, message, ...(hostChanged === true ? { hostChanged } : {}) };
      this.context.stdout.write(`${JSON.stringify({ ok: false, error, rolledBack, activation: report })}\n`);
    } else {
      this.context.stderr.write(`agent-upgrade: ${result.failure.code}: ${renderActivation(report).join('\n')}\n`);
    }
    return rolledBack ? ExitCode.rolledBack : ExitCode.changedThenFailed;
  }
}

export class ActivateCommand extends ActivationCommandBase {
  static override paths = [['activate']];

  static override usage = Command.Usage({
    description: 'Activate a staged candidate binary: install, switch, restart, health-check, roll back on failure.',
    details: `
      Takes the host lock and keeps it to the end. The candidate is first copied privately, so
      replacing the file later cannot change what is activated; it must be a regular executable
      for this architecture whose \`version\` command prints a version (not older than the
      current one unless \`--allow-downgrade\`; a binary that failed before is refused unless
      \`--force\`). The layout is migrated if needed, last-good is protected, the candidate is
      installed into the inactive slot and current is switched to it; then the service is
      restarted and must run the candidate continuously for the stability interval. Any failure
      after the switch points current back at the previous binary and restarts it.

      When releases are signed (a \`trust\` section), the candidate must be, byte for byte, a
      binary target the publisher signed for this architecture: name it with
      \`--signed-target PATH\` (its path in the repository); the candidate must then print the
      signed version. \`--unsigned\` activates it anyway: the override is logged as a warning and
      \`status\` marks the slot that holds it.

      On a terminal (not with \`--json\`) one line, erased when the command ends, says what the
      health wait waits for: the agent's stability, its probe, its watch window, or the previous
      binary's stability after a rollback.

      With \`--preflight\` nothing changes and no lock is taken: the plan is printed.
      Refused while a managed upgrade record exists. Exit codes: 0 activated (or identical),
      1 failed with nothing changed, 2 invalid input, 3 failed and rolled back, 4 busy, 5 changed
      and then failed (the output says where the node stands). SIGINT, SIGTERM or SIGHUP after
      the switch roll back before the command ends; a kill that leaves no time for that is
      resolved by the next command, \`recover\` or the daemon (roll back unless proven healthy).
    `,
    examples: [
      ['Show what would happen', 'sudo $0 activate /tmp/aks-flex-node-candidate --preflight'],
      ['Activate a staged candidate', 'sudo $0 activate /tmp/aks-flex-node-candidate'],
      [
        'Activate a binary the publisher signed (signed releases)',
        'sudo $0 activate /tmp/aks-flex-node --signed-target v1.4.0/aks-flex-node-linux-amd64',
      ],
    ],
  });

  candidate = Option.String({ name: 'CANDIDATE' });
  signedTarget = Option.String('--signed-target', {
    description: 'Signed releases: the target path whose signed SHA-256 the candidate must have',
  });
  unsigned = Option.Boolean('--unsigned', false, {
    description: 'Signed releases: activate a candidate nobody signed (logged, shown in status)',
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const request = {
      candidatePath: resolve(this.candidate),
      requestedVersion: this.version,
      allowDowngrade: this.allowDowngrade,
      force: this.force,
      signedTarget: this.signedTarget,
      acceptUnsigned: this.unsigned,
    };
    if (this.preflight) {
      const plan = await upgrader.value.preflight(request);
      return plan.ok
        ? this.succeed({ preflight: plan.value }, renderPreflight(plan.value))
        : this.failWith(plan.failure);
    }
    const { name } = upgrader.value.config.agent;
    return this.reportActivation(
      await this.interruptible((signal) =>
        this.withHealthLine(name, signal, (onHealthProgress) =>
          upgrader.value.activate({ ...request, signal, onHealthProgress }),
        ),
      ),
    );
  }
}
