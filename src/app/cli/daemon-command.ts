import { realpathSync } from 'node:fs';
import { Command } from 'clipanion';
import { failure } from '../../domain/failure.js';
import { BaseCommand } from './base-command.js';

export class DaemonCommand extends BaseCommand {
  static override paths = [['daemon']];

  static override usage = Command.Usage({
    description: 'Run the managed upgrade daemon: the startup gate, then AgentUpgrade MachineOperations.',
    details: `
      Runs beside the agent (\`agent.mode: "sidecar"\`; a self-hosted agent embeds the library
      instead). First the startup gate: a pending upgrade record is resolved — proven and published
      Complete, or rolled back and published Failed — before anything else changes the host; then
      the layout and the service assets are converged. Then it watches MachineOperations of kind
      AgentUpgrade for this machine (\`cluster.machineName\`, default the host name;
      \`spec.machineRef\` or a \`machineSelector\` matching the local Node's labels) and handles
      them one at a time. Other kinds and other machines' operations are left untouched.

      The cluster connection uses \`cluster.kubeconfig\`, or KUBECONFIG, the in-cluster
      service account or ~/.kube/config. Logs are JSON lines on stderr (\`--log-level info\` is a
      good default for a service). SIGTERM or SIGINT stops it between steps; every step is
      durable, so a stop or a crash anywhere is resumed by the next start.
    `,
    examples: [
      ['As the systemd service runs it', 'agent-upgrade daemon --log-level info'],
      ['Against a sandbox and a test cluster', 'agent-upgrade daemon --root /tmp/sandbox --log-level debug'],
    ],
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    if (upgrader.value.config.agent.mode !== 'sidecar') {
      // This process is not the agent: as "self-hosted" its own executable would never be the
      // candidate, and every upgrade would be judged a failure and rolled back.
      return this.failWith(failure('E_CONFIG', 'agent-upgrade daemon runs beside the agent: set agent.mode to "sidecar" (a self-hosted agent embeds the library and calls Upgrader.daemon itself)'));
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      const result = await upgrader.value.daemon(stop.signal, { selfExecutable: ownExecutable() });
      if (!result.ok) return this.failWith(result.failure);
      return this.succeed({ daemon: result.value }, [`The daemon stopped (${result.value.kind}).`]);
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
}

/** What this process executes: a self-hosted agent that embeds the daemon is its own slot. */
function ownExecutable(): string | null {
  try {
    return realpathSync('/proc/self/exe');
  } catch {
    return null;
  }
}
