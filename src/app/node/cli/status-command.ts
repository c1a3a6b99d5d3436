import { Command } from 'clipanion';
import { exitCodeFor } from '../../../domain/common/error-codes.js';
import { failure, type Failure } from '../../../domain/common/failure.js';
import type { StatusReport } from '../status/read-status.js';
import { BaseCommand } from './base-command.js';
import { renderStatus } from './render-status.js';

export class StatusCommand extends BaseCommand {
  static override paths = [['status']];

  static override usage = Command.Usage({
    description: 'Show the layout, slots, links, upgrade record and lock holder.',
    details: `
      Reads the host without changing anything and without taking the lock: the condition of the
      layout (managed, needs migration, or invalid with the reason), where the current, last-good
      and compatibility links lead, each slot's SHA-256 and the version the state file records
      for it, the quarantined digests, the highest committed version, the pending upgrade record
      if any, who holds the host lock, and the service state.

      Exit codes: 0 the layout is managed or needs migration; 1 the host needs an operator first —
      the layout is invalid, or the upgrade record or the state file cannot be read, which every
      mutating command would refuse — and the whole report is still printed, followed by that
      error (with \`--json\`: \`{"ok":false,"error":{…},"status":{…}}\`); 2 usage or configuration.
    `,
    examples: [
      ['Show the status of this host', '$0 status'],
      ['Machine-readable status of a sandbox', '$0 status --root /tmp/sandbox --json'],
    ],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const status = await upgrader.value.status();
    if (!status.ok) return this.failWith(status.failure);
    const report = status.value;
    const invalid = blockingProblem(report);
    if (invalid === null) return this.succeed({ status: report }, renderStatus(report));
    // A host that needs an operator is not a success, but the operator needs the whole report.
    if (this.json) {
      this.context.stdout.write(
        `${JSON.stringify({ ok: false, error: { code: invalid.code, message: invalid.message }, status: report })}\n`,
      );
      return exitCodeFor(invalid.code);
    }
    for (const line of renderStatus(report)) this.context.stdout.write(`${line}\n`);
    return this.failWith(invalid);
  }
}

/**
 * What makes every mutating command refuse, in the order they meet it: an invalid layout, then an
 * upgrade record, a watch window or a state file that cannot be read (for a user who may not read them, too:
 * the report is then incomplete). A lock or a slot that cannot be read is reported only.
 */
function blockingProblem(report: StatusReport): Failure | null {
  if (report.layout.condition === 'invalid')
    return report.layout.problem ?? failure('E_LAYOUT', 'the layout is invalid');
  if (report.record.present && !report.record.valid) return report.record.problem;
  if (report.watch.present && !report.watch.valid) return report.watch.problem;
  return report.state.problem ?? null;
}
