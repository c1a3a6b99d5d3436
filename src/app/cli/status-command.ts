import { Command } from 'clipanion';
import { BaseCommand } from './base-command.js';
import { renderStatus } from './render-status.js';

export class StatusCommand extends BaseCommand {
  static override paths = [['status']];

  static override usage = Command.Usage({
    description: 'Show the layout, slots, links, upgrade record and lock holder.',
    details: `
      Reads the host without changing anything and without taking the lock: the condition of the
      layout (managed, needs migration, or invalid with the reason), where the current, last-good
      and compatibility links lead, each slot's SHA-256, the pending upgrade record if any, who
      holds the host lock, and the service state.
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
    return this.succeed({ status: status.value }, renderStatus(status.value));
  }
}
