import { realpathSync } from 'node:fs';
import { Command, Option } from 'clipanion';
import { holdEventLoop } from '../../../adapters/node/host/event-loop-hold.js';
import { LOG_LEVELS } from '../../common/cli/output-command.js';
import { BaseCommand } from './base-command.js';

export class DaemonCommand extends BaseCommand {
  // `agent` is what a self-hosted agent's unit runs (agent.args defaults to `agent --config …`):
  // the upgrader built into the agent's binary answers it as the daemon.
  static override paths = [['daemon'], ['agent']];

  static override usage = Command.Usage({
    description: 'Run the managed upgrade daemon: the startup gate, then AgentUpgrade MachineOperations.',
    details: `
      Runs beside the agent (\`agent.mode: "sidecar"\`), or as the agent itself when this
      executable is what the agent's slots hold (\`"self-hosted"\`). First the startup gate: a pending upgrade record is resolved — proven and published
      Complete, or rolled back and published Failed — before anything else changes the host; then
      the layout and the service assets are converged. Then it watches MachineOperations of kind
      AgentUpgrade for this machine (\`cluster.machineName\`, default the host name;
      \`spec.machineRef\` or a \`machineSelector\` matching the local Node's labels) and handles
      them one at a time. Other kinds and other machines' operations are left untouched.

      The cluster connection uses \`cluster.kubeconfig\`, or KUBECONFIG, the in-cluster
      service account or ~/.kube/config. Logs are JSON lines on stderr (readable lines when
      stderr is a terminal), at level \`info\` unless
      \`--log-level\` says otherwise; under systemd each line carries its syslog priority, so
      \`journalctl -p warning\` shows warnings and worse. SIGTERM or SIGINT stops it between steps; every step is
      durable, so a stop or a crash anywhere is resumed by the next start.

      \`agent-upgrade agent\` is the same command: the name a self-hosted agent's service runs
      (\`agent.args\` defaults to \`agent --config …\`).
    `,
    examples: [
      ['As the systemd service runs it', 'agent-upgrade daemon --log-level info'],
      ['Against a sandbox and a test cluster', 'agent-upgrade daemon --root /tmp/sandbox --log-level debug'],
    ],
  });

  // A service's log is read after the fact: its default level says what it did, not just what went wrong.
  override logLevel = Option.String('--log-level', 'info', {
    description: `Log level for stderr (default info): ${LOG_LEVELS.join(', ')}`,
  });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const self = processExecutable();
    // A self-hosted daemon must run from the agent's slots: the library refuses it otherwise.
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // Without a cluster nothing else holds the event loop open while the daemon waits for work.
    const keepAlive = holdEventLoop();
    try {
      const result = await upgrader.value.daemon(stop.signal, { selfExecutable: self });
      if (!result.ok) return this.failWith(result.failure);
      return this.succeed({ daemon: result.value }, [`The daemon stopped (${result.value.kind}).`]);
    } finally {
      keepAlive.release();
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
}

/** What this process executes: a self-hosted agent that embeds the daemon is its own slot. */
function processExecutable(): string | null {
  try {
    return realpathSync('/proc/self/exe');
  } catch {
    return null;
  }
}
