import { Builtins, type Command } from 'clipanion';
import { ExitCode } from '../../domain/error-codes.js';
import { redactUrlsInText } from '../../domain/redacted-url.js';
import { AGENT_UPGRADE_VERSION } from '../../version.js';
import { AgentUpgradeCli } from './agent-upgrade-cli.js';
import type { CliContext } from './cli-context.js';
import { ActivateCommand } from './activate-command.js';
import { ControllerCommand } from './controller-command.js';
import { DaemonCommand } from './daemon-command.js';
import { DemoCommand } from './demo-command.js';
import { FetchCommand } from './fetch-command.js';
import { InstallCommand } from './install-command.js';
import { RecoverCommand } from './recover-command.js';
import { RollbackCommand } from './rollback-command.js';
import {
  RolloutAbortCommand,
  RolloutPauseCommand,
  RolloutResumeCommand,
  RolloutRollbackCommand,
  RolloutStatusCommand,
} from './rollout-commands.js';
import { MigrateCommand } from './migrate-command.js';
import { StatusCommand } from './status-command.js';
import { SuperviseCommand } from './supervise-command.js';
import { VersionCommand } from './version-command.js';
import { diagnoseUsage, type UsageProblem } from './usage-diagnosis.js';

export function createCli(): AgentUpgradeCli {
  const cli = new AgentUpgradeCli({
    binaryLabel: 'agent-upgrade',
    binaryName: 'agent-upgrade',
    binaryVersion: AGENT_UPGRADE_VERSION,
    enableColors: false,
  });
  cli.register(Builtins.HelpCommand);
  cli.register(VersionCommand);
  cli.register(StatusCommand);
  cli.register(MigrateCommand);
  cli.register(FetchCommand);
  cli.register(InstallCommand);
  cli.register(ActivateCommand);
  cli.register(RollbackCommand);
  cli.register(RecoverCommand);
  cli.register(SuperviseCommand);
  cli.register(DaemonCommand);
  cli.register(ControllerCommand);
  cli.register(DemoCommand);
  for (const command of [
    RolloutStatusCommand,
    RolloutPauseCommand,
    RolloutResumeCommand,
    RolloutAbortCommand,
    RolloutRollbackCommand,
  ])
    cli.register(command);
  return cli;
}

/**
 * Runs one command line. Parse errors (unknown command or option, a missing value, option or
 * argument) are usage errors: exit 2, said precisely (with the nearest command or option to a
 * misspelt one), and with `--json` the same one-document error shape as any failure.
 */
export async function runCli(cli: AgentUpgradeCli, argv: readonly string[], context: CliContext): Promise<number> {
  let command: Command<CliContext>;
  try {
    command = cli.process([...argv], context);
  } catch (error) {
    reportUsageError(cli, argv, context, error);
    return ExitCode.usage;
  }
  return cli.run(command, context);
}

function reportUsageError(cli: AgentUpgradeCli, argv: readonly string[], context: CliContext, error: unknown): void {
  const problem: UsageProblem = diagnoseUsage(cli.syntax(), argv) ?? {
    // The parser's own first line; the rest repeats usage lines. It may quote the command line,
    // which may hold a URL with a credential in it.
    message: redactUrlsInText((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''),
    command: null,
  };
  if (argv.includes('--json')) {
    const { message, suggestion, missing } = problem;
    const detail = {
      ...(suggestion === undefined ? {} : { suggestion }),
      ...(missing === undefined ? {} : { missing }),
    };
    context.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'E_USAGE', message, ...detail } })}\n`);
    return;
  }
  const usage = problem.command?.usage ?? null;
  const name = problem.command?.paths[0]?.join(' ') ?? '';
  context.stderr.write(
    [
      `agent-upgrade: E_USAGE: ${problem.message}`,
      ...(usage === null ? [] : [`Usage: ${usage}`]),
      usage === null
        ? 'Run "agent-upgrade --help" for the commands.'
        : `Run "agent-upgrade ${name} --help" for details and examples.`,
    ].join('\n') + '\n',
  );
}
