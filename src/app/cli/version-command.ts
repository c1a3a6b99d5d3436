import { Command } from 'clipanion';
import { AGENT_UPGRADE_VERSION } from '../../version.js';
import { BaseCommand } from './base-command.js';

export class VersionCommand extends BaseCommand {
  static override paths = [['version']];

  static override usage = Command.Usage({
    description: 'Print the version of agent-upgrade.',
    details: 'Prints one line. The candidate check of an upgrade runs `<candidate> version` and reads this line.',
    examples: [
      ['Print the version', '$0 version'],
      ['Print it as JSON', '$0 version --json'],
    ],
  });

  override async execute(): Promise<number> {
    return this.succeed({ version: AGENT_UPGRADE_VERSION }, [`agent-upgrade ${AGENT_UPGRADE_VERSION}`]);
  }
}
