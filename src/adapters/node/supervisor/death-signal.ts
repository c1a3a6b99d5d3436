import { performance } from 'node:perf_hooks';
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { readlink } from 'node:fs/promises';

/**
 * PR_SET_PDEATHSIG through util-linux `setpriv --pdeathsig KILL`: the kernel kills the agent
 * when the thread that forked it exits, so a supervisor killed by SIGKILL takes its agent along
 * and nothing is left to run beside the next supervisor's. Node forks from the main thread (the
 * event loop's), whose exit is the process's exit; a Supervisor run in a worker thread would
 * lose its agent whenever the worker ended. setpriv sets the signal and execs the agent in
 * place: the same PID and process group, and /proc/<pid>/exe is the slot binary.
 *
 * It does not cover everything, so the agent record (agent-record.ts) stays: the signal is not
 * yet set for an instant after fork, the kernel clears it on exec of a set-user-ID or
 * file-capability binary, it is never inherited by what the agent forks, and a host may lack
 * setpriv (util-linux 2.33 or later).
 */
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];

const PROBE_TIMEOUT_MS = 5000;

/** setpriv execs within microseconds; a launcher still there after this is reported as it is. */
const EXEC_WAIT_MS = 2000;
const EXEC_POLL_MS = 2;

export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
}

let probed: Promise<string | null> | null = null;

/** The real path of a setpriv that accepts --pdeathsig, probed once per process; null when there is none. */
export function findDeathSignalLauncher(): Promise<string | null> {
  probed ??= probeLaunchers();
  return probed;
}

/** The command line that runs `execStart` directly, or through `launcher` with the death signal set. */
export function launchCommand(launcher: string | null, execStart: string, args: readonly string[]): Launch {
  if (launcher === null) return { command: execStart, args };
  return { command: launcher, args: ['--pdeathsig', 'KILL', '--', execStart, ...args] };
}

/**
 * Waits (bounded) until `pid` has exec'd past `launcher`, so the supervisor never reports, nor
 * records, setpriv as the agent's executable. Returns early once the process is gone.
 */
export async function waitPastLauncher(pid: number, launcher: string, hasExited: () => boolean): Promise<void> {
  const deadlineMs = performance.now() + EXEC_WAIT_MS;
  while (!hasExited() && performance.now() < deadlineMs) {
    let executable: string;
    try {
      executable = await readlink(`/proc/${pid}/exe`);
    } catch {
      return;
    }
    if (executable !== launcher) return;
    await new Promise((resolve) => setTimeout(resolve, EXEC_POLL_MS));
  }
}

async function probeLaunchers(): Promise<string | null> {
  for (const path of SETPRIV_PATHS) {
    if (!existsSync(path)) continue;
    const real = realpathSync(path);
    // An old setpriv refuses the option and exits non-zero; this one execs itself and succeeds.
    if (await succeeds(real, ['--pdeathsig', 'KILL', '--', real, '--version'])) return real;
  }
  return null;
}

function succeeds(command: string, args: readonly string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(command, [...args], { timeout: PROBE_TIMEOUT_MS }, (error) => resolve(error === null));
  });
}
