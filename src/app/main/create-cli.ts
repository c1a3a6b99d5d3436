import { Builtins, type Command, type CommandClass } from 'clipanion';
import { ExitCode } from '../../domain/common/error-codes.js';
import { redactUrlsInText } from '../../domain/common/redacted-url.js';
import { AGENT_UPGRADE_VERSION } from '../../package-version.js';
import { AgentUpgradeCli } from './agent-upgrade-cli.js';
import type { CliContext } from '../common/cli/cli-context.js';
import type { ProgramContext } from './program-context.js';
import { ActivateCommand } from '../node/cli/activate-command.js';
import { ControllerCommand } from '../fleet/cli/controller-command.js';
import { DaemonCommand } from '../node/cli/daemon-command.js';
import { DemoCommand } from '../node/cli/demo-command.js';
import { FetchCommand } from '../node/cli/fetch-command.js';
import { InstallCommand } from '../node/cli/install-command.js';
import { RecoverCommand } from '../node/cli/recover-command.js';
import { RollbackCommand } from '../node/cli/rollback-command.js';
import {
  RolloutAbortCommand,
  RolloutApproveCommand,
  RolloutPauseCommand,
  RolloutResumeCommand,
  RolloutRollbackCommand,
} from '../fleet/cli/rollout-commands.js';
import { RolloutListCommand, RolloutStatusCommand } from '../fleet/cli/rollout-read-commands.js';
import { ReleaseQuarantineCommand, ReleaseUnquarantineCommand } from '../fleet/cli/release-commands.js';
import { MigrateCommand } from '../node/cli/migrate-command.js';
import { StatusCommand } from '../node/cli/status-command.js';
import { SuperviseCommand } from '../node/cli/supervise-command.js';
import { VersionCommand } from '../node/cli/version-command.js';
import { diagnoseUsage, type UsageProblem } from '../common/cli/usage-diagnosis.js';

export function createCli(): AgentUpgradeCli {
  const cli = new AgentUpgradeCli({
    binaryLabel: 'agent-upgrade',
    binaryName: 'agent-upgrade',
    binaryVersion: AGENT_UPGRADE_VERSION,
    enableColors: false,
  });
  cli.register(Builtins.HelpCommand);
  const node = [VersionCommand, StatusCommand, MigrateCommand, FetchCommand, InstallCommand, ActivateCommand];
  for (const command of [...node, RollbackCommand, RecoverCommand, SuperviseCommand, DaemonCommand, DemoCommand])
    register(cli, command);
  const rollout = [RolloutListCommand, RolloutStatusCommand, RolloutPauseCommand, RolloutResumeCommand];
  const steer = [RolloutApproveCommand, RolloutAbortCommand, RolloutRollbackCommand];
  for (const command of [ControllerCommand, ...rollout, ...steer, ReleaseQuarantineCommand, ReleaseUnquarantineCommand])
    register(cli, command);
  return cli;
}

/**
 * Each command is typed with the part of the context it reads (node or fleet). The program's
 * context has both parts, so the cast only widens what clipanion's invariant typing cannot.
 */
function register<C extends CliContext>(cli: AgentUpgradeCli, command: CommandClass<C>): void {
  cli.register(command as unknown as CommandClass<ProgramContext>);
}

/**
 * Runs one command line. Parse errors (unknown command or option, a missing value, option or
 * argument) are usage errors: exit 2, said precisely (with the nearest command or option to a
 * misspelt one), and with `--json` the same one-document error shape as any failure.
 */
export async function runCli(cli: AgentUpgradeCli, argv: readonly string[], context: ProgramContext): Promise<number> {
  let command: Command<ProgramContext>;
  // `help` and `help rollout status` read as `--help` and `rollout status --help`, as git and
  // kubectl answer them.
  const args = argv[0] === 'help' ? [...argv.slice(1), '--help'] : [...argv];
  try {
    command = cli.process(args, context);
  } catch (error) {
    reportUsageError(cli, args, context, error);
    return ExitCode.usage;
  }
  return cli.run(command, context);
}

function reportUsageError(
  cli: AgentUpgradeCli,
  argv: readonly string[],
  context: ProgramContext,
  error: unknown,
): void {
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
