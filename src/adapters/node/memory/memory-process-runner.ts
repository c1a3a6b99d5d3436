import type { ProcessRunner, RunOutcome, RunRequest } from '../../../ports/common/process-runner.js';

/** What a scripted command does: a fixed outcome, or one computed from the request. */
export type ScriptedBehaviour = RunOutcome | ((request: RunRequest) => RunOutcome | Promise<RunOutcome>);

/** The outcome `<binary> version` gives for an agent that reports `version` (without the `v`). */
export function versionOutcome(version: string): RunOutcome {
  return { kind: 'exited', exitCode: 0, stdout: `agent version v${version}\n`, stderr: '' };
}

/**
 * A ProcessRunner driven by a script keyed by command path. Unscripted commands fail to spawn
 * with ENOENT, as a missing executable would, so a simulation never runs something by accident.
 * Every request is logged in `runs` (argv is checked for secrets, docs/protocol.md#i8).
 */
export class MemoryProcessRunner implements ProcessRunner {
  private readonly behaviours = new Map<string, ScriptedBehaviour>();
  readonly runs: RunRequest[] = [];

  setBehaviour(command: string, behaviour: ScriptedBehaviour): void {
    this.behaviours.set(command, behaviour);
  }

  clearBehaviour(command: string): void {
    this.behaviours.delete(command);
  }

  async run(request: RunRequest): Promise<RunOutcome> {
    // A copy: the caller may reuse its arrays, and the log must show what was actually run.
    this.runs.push({ ...request, args: [...request.args] });
    // The node runner reports an abort as a timeout (the tree is killed either way).
    if (request.signal?.aborted === true) return { kind: 'timed-out' };
    const behaviour = this.behaviours.get(request.command);
    if (behaviour === undefined) return { kind: 'spawn-failed', code: 'ENOENT' };
    const outcome = typeof behaviour === 'function' ? await behaviour(request) : behaviour;
    return capOutput(outcome, request.outputMaxBytes);
  }
}

/** Applies the port's output cap, so a script cannot hand the app more than a real run could. */
function capOutput(outcome: RunOutcome, maxBytes: number): RunOutcome {
  if (outcome.kind !== 'exited' && outcome.kind !== 'signalled') return outcome;
  return { ...outcome, stdout: cut(outcome.stdout, maxBytes), stderr: cut(outcome.stderr, maxBytes) };
}

function cut(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  return bytes.length <= maxBytes ? text : new TextDecoder().decode(bytes.subarray(0, Math.max(0, maxBytes)));
}
