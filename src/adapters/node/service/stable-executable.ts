import { readlink } from 'node:fs/promises';
import type { Clock } from '../../../ports/common/clock.js';
import type { HealthLimits, HealthVerdict, HealthWaitOptions } from '../../../ports/node/service-manager.js';

/** What one poll sees: the service's main process and the real path of its executable. */
export interface MainProcessSample {
  readonly pid: number;
  /** `null` when the executable cannot be read (the process just exited). */
  readonly executable: string | null;
}

/**
 * One poll: the main process, `null` when none runs (stopped, or between two starts), or
 * 'gave-up' when the manager stopped restarting the agent (a failed unit, the start limit hit).
 */
export type MainProcessObservation = MainProcessSample | null | 'gave-up';

/** `mainExecutable` from a poll: the real path the main process runs, or null when none runs. */
export function executableIn(observation: MainProcessObservation): string | null {
  return observation === null || observation === 'gave-up' ? null : observation.executable;
}

/**
 * The health rule every service adapter shares (docs/operations.md#service-platforms): one main
 * process runs `expectedPath` without interruption for `stableMs`, within `timeoutMs`, sampled
 * every `pollMs`. A new main PID restarts the interval, so an agent that systemd keeps restarting
 * is never "stable"; a manager that gave up (failed unit, start limit hit) ends the wait early.
 */
export async function waitForStableExecutable(
  sample: () => Promise<MainProcessObservation>,
  expectedPath: string,
  limits: HealthLimits,
  clock: Clock,
  options: HealthWaitOptions = {},
): Promise<HealthVerdict> {
  const { signal, onPoll } = options;
  const deadlineMs = clock.monotonicMs() + limits.timeoutMs;
  let stable: { readonly pid: number; readonly sinceMs: number } | null = null;
  let lastSeen: MainProcessSample | null = null;
  for (;;) {
    if (signal?.aborted === true) return { kind: 'unhealthy', reason: 'the wait was interrupted' };
    const polled = await sample();
    // The manager stopped restarting the agent: waiting longer cannot make it healthy.
    if (polled === 'gave-up') return { kind: 'unhealthy', reason: 'the service manager gave up restarting the agent' };
    const seen = polled;
    const nowMs = clock.monotonicMs();
    if (seen !== null) lastSeen = seen;
    if (seen !== null && seen.executable === expectedPath) {
      const since: { readonly pid: number; readonly sinceMs: number } =
        stable?.pid === seen.pid ? stable : { pid: seen.pid, sinceMs: nowMs };
      stable = since;
      onPoll?.(nowMs - since.sinceMs);
      if (nowMs - since.sinceMs >= limits.stableMs) return { kind: 'healthy' };
    } else {
      stable = null;
      onPoll?.(0);
    }
    if (nowMs >= deadlineMs) return verdictAtDeadline(seen, lastSeen);
    await clock.sleep(Math.min(limits.pollMs, Math.max(1, deadlineMs - nowMs)));
  }
}

function verdictAtDeadline(seen: MainProcessSample | null, lastSeen: MainProcessSample | null): HealthVerdict {
  if (seen === null)
    return lastSeen === null ? { kind: 'not-running' } : { kind: 'unhealthy', reason: 'the agent stopped running' };
  if (seen.executable === null) return { kind: 'unhealthy', reason: "the agent's executable could not be read" };
  return {
    kind: 'unhealthy',
    reason: `the agent was not running the expected binary stably (it runs ${seen.executable})`,
  };
}

/** A poll's view of main process `pid`, its executable read under `procRoot`. */
export async function sampleOf(pid: number, procRoot = '/proc'): Promise<MainProcessSample> {
  return { pid, executable: await executableOf(pid, procRoot) };
}

/** The real path of `pid`'s executable under `procRoot`, or `null` when the process is gone. */
export async function executableOf(pid: number, procRoot = '/proc'): Promise<string | null> {
  try {
    return await readlink(`${procRoot}/${pid}/exe`);
  } catch {
    // The process exited between the manager's answer and the read.
    return null;
  }
}
