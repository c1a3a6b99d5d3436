import { Command } from 'clipanion';
import { AGENT_UPGRADE_VERSION } from '../../../package-version.js';
import { BaseCommand } from './base-command.js';

export class VersionCommand extends BaseCommand {
  // `--version` and `-v` answer here too, rather than clipanion's built-in (which prints the bare
  // number): one text, whichever way the version is asked for.
  static override paths = [['version'], ['--version'], ['-v']];

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
