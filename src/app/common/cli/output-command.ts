import { Command, Option } from 'clipanion';
import { exitCodeFor, ExitCode } from '../../../domain/common/error-codes.js';
import type { Failure } from '../../../domain/common/failure.js';
import type { CliContext } from './cli-context.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * What every command shares, and the one place output and exit codes are decided:
 * `--json` prints exactly one JSON document, failures as {"ok":false,"error":{code,message}}.
 */
export abstract class OutputCommand<C extends CliContext = CliContext> extends Command<C> {
  json = Option.Boolean('--json', false, { description: 'Print one JSON document instead of text' });
  // Checked by hand rather than with a typanion validator: loading typanion costs every start
  // (even `--help`) about 10 ms of the 2× budget (docs/benchmarks.md#start-up).
  logLevel = Option.String('--log-level', 'warn', { description: `Log level for stderr: ${LOG_LEVELS.join(', ')}` });

  /** A usage failure when `--log-level` names no level. */
  protected invalidLogLevel(): Failure | null {
    if ((LOG_LEVELS as readonly string[]).includes(this.logLevel)) return null;
    return {
      code: 'E_USAGE',
      message: `--log-level must be one of ${LOG_LEVELS.join(', ')} (got "${this.logLevel.slice(0, 40)}")`,
    };
  }

  /** Prints a success: `data` as JSON with `"ok": true`, or the text lines. */
  protected succeed(data: Record<string, unknown>, text: readonly string[], exitCode: ExitCode = ExitCode.ok): number {
    if (this.json) this.context.stdout.write(`${JSON.stringify({ ok: true, ...data })}\n`);
    else for (const line of text) this.context.stdout.write(`${line}\n`);
    return exitCode;
  }

  /**
   * Prints a failure and returns its exit code (docs/protocol.md#exit-codes): 5 when the host had changed before
   * the failure, so a script never reads "nothing changed" when something did.
   */
  protected failWith(problem: Failure, exitCode: ExitCode = defaultExitCode(problem)): number {
    const changed = problem.hostChanged === true;
    if (this.json) {
      this.context.stdout.write(
        `${JSON.stringify({ ok: false, error: { code: problem.code, message: problem.message, ...(changed ? { hostChanged: true } : {}) } })}\n`,
      );
    } else {
      this.context.stderr.write(
        `agent-upgrade: ${problem.code}: ${problem.message}${changed ? ' (the host was changed before this failure; run `agent-upgrade status`)' : ''}\n`,
      );
    }
    return exitCode;
  }

  /**
   * Runs `body` with an AbortSignal that SIGINT, SIGTERM and SIGHUP abort (when the context
   * delivers signals): a long command rolls back what it started before it ends.
   */
  protected async interruptible<T>(body: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    const interrupts = this.context.interrupts?.();
    try {
      return await body(interrupts?.signal);
    } finally {
      interrupts?.dispose();
    }
  }
}

function defaultExitCode(problem: Failure): ExitCode {
  return problem.hostChanged === true ? ExitCode.changedThenFailed : exitCodeFor(problem.code);
}
