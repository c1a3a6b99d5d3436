import { Builtins, Cli, type Command } from 'clipanion';
import { ExitCode } from '../../domain/error-codes.js';
import { redactUrlsInText } from '../../domain/redacted-url.js';
import { AGENT_UPGRADE_VERSION } from '../../version.js';
import type { CliContext } from './cli-context.js';
import { ActivateCommand } from './activate-command.js';
import { DaemonCommand } from './daemon-command.js';
import { DemoCommand } from './demo-command.js';
import { FetchCommand } from './fetch-command.js';
import { InstallCommand } from './install-command.js';
import { RecoverCommand } from './recover-command.js';
import { RollbackCommand } from './rollback-command.js';
import { MigrateCommand } from './migrate-command.js';
import { StatusCommand } from './status-command.js';
import { SuperviseCommand } from './supervise-command.js';
import { VersionCommand } from './version-command.js';

export function createCli(): Cli<CliContext> {
  const cli = new Cli<CliContext>({
    binaryLabel: 'agent-upgrade',
    binaryName: 'agent-upgrade',
    binaryVersion: AGENT_UPGRADE_VERSION,
    enableColors: false,
  });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
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
  cli.register(DemoCommand);
  return cli;
}

/**
 * Runs one command line. Parse errors (unknown command or option, invalid option value) are
 * usage errors: exit 2, and with `--json` the same one-document error shape as any failure.
 */
export async function runCli(cli: Cli<CliContext>, argv: readonly string[], context: CliContext): Promise<number> {
  let command: Command<CliContext>;
  try {
    command = cli.process([...argv], context);
  } catch (error) {
    // Parse errors quote the command line, which may hold a URL with a credential in it.
    const message = redactUrlsInText(error instanceof Error ? error.message : String(error));
    if (argv.includes('--json')) context.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'E_USAGE', message } })}\n`);
    else context.stderr.write(redactUrlsInText(cli.error(error instanceof Error ? error : new Error(message), { colored: false })));
    return ExitCode.usage;
  }
  return cli.run(command, context);
}
