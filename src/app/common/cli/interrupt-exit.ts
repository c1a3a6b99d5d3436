import { constants } from 'node:os';
import type { Failure } from '../../../domain/common/failure.js';

/** What ended a command early: a signal, or the reader of stdout going away (`| head`). */
export type InterruptCause = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGPIPE';

/**
 * The abort reason of the CLI's interrupt signal. Named AbortError, as any abort reason is
 * expected to be, and it says which signal it was, so the exit code can say so too.
 */
export class InterruptReason extends Error {
  constructor(readonly signalName: InterruptCause) {
    super(`interrupted by ${signalName}`);
    this.name = 'AbortError';
  }
}

/**
 * The exit code of a command whose work an interrupt stopped (it failed with E_INTERRUPTED):
 * 128 + the signal's number, as a shell reports a process that signal ended — 130 for SIGINT,
 * 143 for SIGTERM, 129 for SIGHUP, 141 when stdout's reader went away. Null when the failure
 * is not an interrupt.
 */
export function interruptedExitCode(signal: AbortSignal | undefined, problem: Failure): number | null {
  if (signal?.aborted !== true || problem.code !== 'E_INTERRUPTED') return null;
  const cause = signal.reason instanceof InterruptReason ? signal.reason.signalName : 'SIGINT';
  return 128 + constants.signals[cause];
}
