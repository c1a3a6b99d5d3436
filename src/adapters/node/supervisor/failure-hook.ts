import type { Logger } from '../../../ports/common/logger.js';
import { ProcessGroup } from './process-group.js';

/** OnFailure=: a program run (argv, no shell) when the supervisor gives up on the agent. */
export interface FailureHook {
  readonly command: string;
  readonly args: readonly string[];
  /** The hook's process group is killed when it runs longer than this. */
  readonly timeoutMs: number;
}

/**
 * Runs the hook once and resolves when it ended or was killed at its deadline; never rejects.
 * `onSpawned` receives the hook's group (or null when it could not start), so a supervisor
 * shutting down can stop it early.
 */
export async function runFailureHook(
  hook: FailureHook,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  onSpawned: (group: ProcessGroup | null) => void,
): Promise<void> {
  // The hook's report is diagnostics: it goes to stderr, so the supervisor's stdout stays the agent's.
  const outcome = await ProcessGroup.spawn(hook.command, hook.args, env, 'stderr');
  if (outcome.kind === 'failed') {
    onSpawned(null);
    logger.error({ path: hook.command, code: outcome.code }, 'The on-failure hook could not be started.');
    return;
  }
  const group = outcome.group;
  onSpawned(group);
  logger.info({ path: hook.command, pid: group.pid }, 'The on-failure hook started.');
  if (!(await group.exitsWithin(hook.timeoutMs))) {
    logger.error(
      { path: hook.command, pid: group.pid, timeoutMs: hook.timeoutMs },
      'The on-failure hook ran too long; killing it.',
    );
    if (!(await group.kill())) logger.error({ pid: group.pid }, 'The on-failure hook did not exit even after SIGKILL.');
    return;
  }
  const status = await group.exited;
  if (status.code === 0) logger.info({ path: hook.command }, 'The on-failure hook finished.');
  else logger.warn({ path: hook.command, code: status.code, signal: status.signal }, 'The on-failure hook failed.');
}

/**
 * At most one hook at a time. A failure while the hook runs is not merged into it (as systemd
 * merges the start job): the running hook may have looked at the host before that failure's cause
 * existed — a `recover` that found no marker yet — so the hook runs once more after it ends.
 * Several such failures still mean one more run.
 */
export class FailureHookSlot {
  private running: { readonly group: Promise<ProcessGroup | null>; readonly done: Promise<void> } | null = null;
  private rerun: (() => void) | null = null;
  private stopping = false;

  /** Whether a hook runs now (systemd shows the OnFailure= unit's own state the same way). */
  get isRunning(): boolean {
    return this.running !== null;
  }

  /** Starts `hook`, or queues one more run after the running one; returns at once. */
  start(hook: FailureHook, env: NodeJS.ProcessEnv, logger: Logger): void {
    if (this.stopping) return;
    if (this.running !== null) {
      this.rerun = () => this.start(hook, env, logger);
      return;
    }
    let reportGroup: (group: ProcessGroup | null) => void = () => undefined;
    const group = new Promise<ProcessGroup | null>((resolve) => {
      reportGroup = resolve;
    });
    const done = runFailureHook(hook, env, logger, reportGroup).finally(() => {
      this.running = null;
      const rerun = this.rerun;
      this.rerun = null;
      rerun?.();
    });
    this.running = { group, done };
  }

  /** Stops a running hook (SIGTERM to its group, SIGKILL after `timeoutMs`), drops a queued run, and waits. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    this.rerun = null;
    const running = this.running;
    if (running === null) return;
    const group = await running.group;
    if (group !== null) await group.stop(timeoutMs);
    await running.done;
  }
}
