import { spawn } from 'node:child_process';

/** After SIGKILL, how long to wait for the exit before reporting the process as stuck. */
export const KILL_WAIT_MS = 5000;

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export type SpawnOutcome =
  { readonly kind: 'spawned'; readonly group: ProcessGroup } | { readonly kind: 'failed'; readonly code: string };

/**
 * One program started without a shell as the leader of its own session and process group, so
 * that signals reach everything it forked. This is the supervisor's stand-in for a unit's
 * cgroup: a descendant that calls setsid itself escapes it.
 */
export class ProcessGroup {
  /** Resolves once the leader exited; never rejects. */
  readonly exited: Promise<ExitStatus>;
  private exitStatus: ExitStatus | null = null;
  private stopRequestedFlag = false;

  private constructor(
    readonly pid: number,
    exited: Promise<ExitStatus>,
  ) {
    this.exited = exited.then((status) => {
      this.exitStatus = status;
      return status;
    });
  }

  /**
   * Starts `command` (resolved by the kernel at this moment, so a link switched since the last
   * start takes effect) and resolves once it runs or failed to start (ENOENT, EACCES, ...).
   */
  static spawn(
    command: string,
    args: readonly string[],
    env: NodeJS.ProcessEnv = process.env,
    stdoutTo: 'stdout' | 'stderr' = 'stdout',
  ): Promise<SpawnOutcome> {
    return new Promise((resolve) => {
      const child = spawn(command, [...args], {
        detached: true,
        stdio: ['ignore', stdoutTo === 'stdout' ? 'inherit' : 2, 'inherit'],
        env,
      });
      const exited = new Promise<ExitStatus>((resolveExit) => {
        child.once('exit', (code, signal) => {
          // The leader is gone; whatever it left in its group belongs to the dead instance and
          // must not run beside the next one. The group ID cannot have been reused: the kernel
          // keeps a PID reserved while it names a live process group.
          if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
          resolveExit({ code, signal });
        });
      });
      let settled = false;
      child.once('spawn', () => {
        settled = true;
        // 'spawn' is emitted only once the kernel gave the child a PID.
        const pid = child.pid;
        if (pid === undefined) resolve({ kind: 'failed', code: 'UNKNOWN' });
        else resolve({ kind: 'spawned', group: new ProcessGroup(pid, exited) });
      });
      // A listener stays attached for the child's lifetime: an unhandled 'error' event would
      // crash the supervisor. Before 'spawn' it is the failed start (ENOENT, EACCES, ...).
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        resolve({ kind: 'failed', code: error.code ?? 'UNKNOWN' });
      });
    });
  }

  get hasExited(): boolean {
    return this.exitStatus !== null;
  }

  /** Whether the supervisor asked this group to stop, so its exit is not a failure. */
  get stopRequested(): boolean {
    return this.stopRequestedFlag;
  }

  signal(signal: NodeJS.Signals): void {
    signalGroup(this.pid, signal);
  }

  /**
   * SIGTERM to the group, SIGKILL after `timeoutMs`, like systemd's TimeoutStopSec. Returns
   * false when even SIGKILL did not end the leader within KILL_WAIT_MS (uninterruptible sleep).
   */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopRequestedFlag = true;
    if (this.hasExited) return true;
    this.signal('SIGTERM');
    if (await this.exitsWithin(timeoutMs)) return true;
    this.signal('SIGKILL');
    return this.exitsWithin(KILL_WAIT_MS);
  }

  /** Kills the group at once (a hook past its deadline). */
  async kill(): Promise<boolean> {
    this.stopRequestedFlag = true;
    if (this.hasExited) return true;
    this.signal('SIGKILL');
    return this.exitsWithin(KILL_WAIT_MS);
  }

  /** Whether the leader exits within `timeoutMs`. */
  async exitsWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.exited.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Signals every member of process group `pgid`; an empty group is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  // process.kill(-0) would signal the supervisor's own group.
  if (pgid <= 0) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}
