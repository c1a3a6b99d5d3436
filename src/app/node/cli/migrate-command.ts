import { Command } from 'clipanion';
import { BaseCommand } from './base-command.js';

export class MigrateCommand extends BaseCommand {
  static override paths = [['migrate']];

  static override usage = Command.Usage({
    description: 'Converge a legacy single-file install into the managed blue/green layout.',
    details: `
      Creates the slot directory, copies a legacy binary into the blue slot, points the current and
      last-good links, replaces the compatibility entry with a link to the current link, and
      rewrites the service assets. Each step only does what is missing, so running it again is
      harmless, and a crash at any step is repaired by running it again. Takes the host lock.
      A slot that is not a regular file (a directory, a FIFO, a symlink) is left alone and
      reported; current is still repaired from the other slot.

      Exit codes: 0 done (or nothing to do), 1 failed with nothing changed, 2 invalid input,
      4 the host lock is busy.
    `,
    examples: [
      ['Migrate this host (as root)', 'sudo $0 migrate'],
      ['Migrate a sandbox copy of a host', '$0 migrate --root /tmp/sandbox --json'],
    ],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const report = await upgrader.value.migrate();
    if (!report.ok) return this.failWith(report.failure);
    const { value } = report;
    const lines = value.changed
      ? [
          `Migrated to the managed layout: current -> ${value.currentSlot}, last-good -> ${value.lastGoodSlot}.`,
          ...value.actions.map((action) => `  - ${action}`),
        ]
      : [
          `The managed layout is already in place: current -> ${value.currentSlot}, last-good -> ${value.lastGoodSlot}. No changes.`,
        ];
    const warnings = value.brokenSlots.map((problem) => `Warning (${problem.code}): ${problem.message}.`);
    return this.succeed({ migration: value }, [...lines, ...warnings]);
  }
}
