import { Command } from 'clipanion';
import { BaseCommand } from './base-command.js';

export class SuperviseCommand extends BaseCommand {
  static override paths = [['supervise']];

  static override usage = Command.Usage({
    description: 'Run the agent under the built-in supervisor (hosts without systemd: containers, demos).',
    details: `
      Runs the agent's current link with the configured arguments and keeps it running: a
      non-zero exit or an unexpected signal restarts it after \`service.restartSec\`; more than
      \`service.startLimitBurst\` starts within \`service.startLimitIntervalSec\` leave it failed and
      run recovery once (\`recover\`, through the last-good binary when self-hosted), exactly as
      the systemd unit's OnFailure= does. Other commands reach it through its control socket
      (\`service.supervisorSocket\`, mode 0600) when \`service.manager\` is "supervisor".

      Runs in the foreground until SIGTERM or SIGINT, then stops the agent (SIGTERM, SIGKILL
      after 60 s) and removes the socket. Exit codes: 0 stopped, 2 invalid configuration, 4 another
      supervisor already runs on the socket.
    `,
    examples: [
      ['Supervise the agent of a sandbox', 'agent-upgrade supervise --root /tmp/sandbox'],
      ['As a container entry point', 'agent-upgrade supervise --config /etc/aks-flex-node/agent-upgrade.json'],
    ],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      const result = await upgrader.value.supervise(stop.signal);
      if (!result.ok) return this.failWith(result.failure);
      return this.succeed({ supervise: { stopped: true } }, ['The supervisor stopped the agent and exited.']);
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
}
