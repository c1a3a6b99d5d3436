import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import { exitCodeFor, ExitCode } from '../../domain/error-codes.js';
import type { Failure, Result } from '../../domain/failure.js';
import type { Upgrader } from '../upgrader.js';
import type { CliContext } from './cli-context.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Options every command shares, and the one place output and exit codes are decided:
 * `--json` prints exactly one JSON document, failures as {"ok":false,"error":{code,message}}.
 */
export abstract class BaseCommand extends Command<CliContext> {
  config = Option.String('--config', { description: 'Configuration file (default: /etc/aks-flex-node/agent-upgrade.json when present)' });
  root = Option.String('--root', { description: 'Re-root every host path under DIR (sandboxes, demos, tests)' });
  json = Option.Boolean('--json', false, { description: 'Print one JSON document instead of text' });
  logLevel = Option.String('--log-level', 'warn', {
    description: `Log level for stderr: ${LOG_LEVELS.join(', ')}`,
    validator: t.isEnum(LOG_LEVELS),
  });

  protected async openUpgrader(): Promise<Result<Upgrader>> {
    return this.context.openUpgrader({ configPath: this.config, root: this.root, logLevel: this.logLevel });
  }

  /** Prints a success: `data` as JSON with `"ok": true`, or the text lines. */
  protected succeed(data: Record<string, unknown>, text: readonly string[], exitCode: ExitCode = ExitCode.ok): number {
    if (this.json) this.context.stdout.write(`${JSON.stringify({ ok: true, ...data })}\n`);
    else for (const line of text) this.context.stdout.write(`${line}\n`);
    return exitCode;
  }

  /** Prints a failure and returns its exit code (SPEC §8). */
  protected failWith(problem: Failure, exitCode: ExitCode = exitCodeFor(problem.code)): number {
    if (this.json) this.context.stdout.write(`${JSON.stringify({ ok: false, error: { code: problem.code, message: problem.message } })}\n`);
    else this.context.stderr.write(`agent-upgrade: ${problem.code}: ${problem.message}\n`);
    return exitCode;
  }
}
