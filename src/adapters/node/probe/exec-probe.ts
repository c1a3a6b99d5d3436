import { probeFailed, type ProbeOutcome } from '../../../domain/node/health/probe-target.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import type { ProbeAttemptOptions } from '../../../ports/node/health-probe.js';

/**
 * What an exec probe's output may cost: it is drained so a chatty probe cannot block on a full
 * pipe, but never reported (it is the agent's text, and may hold anything).
 */
export const EXEC_PROBE_OUTPUT_MAX_BYTES = 4 * 1024;

/**
 * One exec attempt: the program runs without a shell, in a process group (and a cgroup when one
 * can be made) of its own, through the ProcessRunner, which kills the whole tree at the deadline.
 * Exit status 0 is success.
 */
export async function attemptExec(
  runner: ProcessRunner,
  command: readonly string[],
  options: ProbeAttemptOptions,
): Promise<ProbeOutcome> {
  const [program, ...args] = command;
  if (program === undefined) return probeFailed('spawn-failed', 'the probe command is empty');
  const outcome = await runner.run({
    command: program,
    args,
    timeoutMs: options.timeoutMs,
    outputMaxBytes: EXEC_PROBE_OUTPUT_MAX_BYTES,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  switch (outcome.kind) {
    case 'exited':
      return outcome.exitCode === 0
        ? { kind: 'succeeded' }
        : probeFailed('exit-status', `exit status ${outcome.exitCode}`);
    case 'signalled':
      return probeFailed('signalled', `killed by ${outcome.signal}`);
    case 'timed-out':
      // The runner reports an abort as a timeout; the caller's signal says which it was.
      return options.signal?.aborted === true
        ? probeFailed('interrupted', 'interrupted')
        : probeFailed('timed-out', `timed out after ${options.timeoutMs} ms`);
    case 'spawn-failed':
      return probeFailed('spawn-failed', `could not start the probe command (${outcome.code})`);
  }
}
