import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import { controlFailure, type ControlFailure } from './control-protocol.js';
import type { FailureHook } from './failure-hook.js';
import { SupervisorError } from './supervisor-error.js';

export interface SupervisorOptions {
  /** The current link: the kernel resolves it at every spawn, so a switch changes what the next start runs. */
  readonly execStart: string;
  readonly args: readonly string[];
  /** The control socket's path (created mode 0600); the agent record lives next to it (agent-record.ts). */
  readonly controlSocket: string;
  /** RestartSec=: the pause before restarting an agent that failed. */
  readonly restartDelayMs: number;
  /** StartLimitBurst= and StartLimitIntervalSec=: more starts than this within the interval → 'failed'. */
  readonly startLimitBurst: number;
  readonly startLimitIntervalMs: number;
  /** TimeoutStopSec=: SIGTERM to the agent's group, SIGKILL after this. */
  readonly stopTimeoutMs: number;
  /** OnFailure=: run once each time the agent enters 'failed'; it may call back over the socket. */
  readonly onFailure: FailureHook | null;
  /**
   * Whether the agent gets SIGKILL when the supervisor dies (death-signal.ts; default true, used
   * when setpriv is available). Without it only the agent record protects against an orphan.
   */
  readonly parentDeathSignal?: boolean;
  readonly logger?: Logger;
  /**
   * Times the start limit and the restart delays (default: the system clock); the memory clock
   * lets a test drive them without waiting.
   */
  readonly clock?: Clock;
  /** How long a control client may take to send its request (default 5 s). */
  readonly controlReadTimeoutMs?: number;
}

export function validateOptions(options: SupervisorOptions): void {
  const durations: Record<string, number> = {
    restartDelayMs: options.restartDelayMs,
    startLimitIntervalMs: options.startLimitIntervalMs,
    stopTimeoutMs: options.stopTimeoutMs,
    ...(options.onFailure === null ? {} : { 'onFailure.timeoutMs': options.onFailure.timeoutMs }),
  };
  for (const [name, value] of Object.entries(durations)) {
    if (!Number.isInteger(value) || value < 0)
      throw new SupervisorError('invalid-options', `${name} must be a non-negative integer`);
  }
  if (!Number.isInteger(options.startLimitBurst) || options.startLimitBurst < 1) {
    throw new SupervisorError('invalid-options', 'startLimitBurst must be a positive integer');
  }
  if (options.execStart === '') throw new SupervisorError('invalid-options', 'execStart must not be empty');
}

export function startLimitHit(): ControlFailure {
  return controlFailure(
    'start-limit-hit',
    'the agent was started too often; restart with resetFailed to clear the start limit',
  );
}

export function stopFailed(pid: number): ControlFailure {
  return controlFailure('stop-failed', `the agent (pid ${pid}) did not exit even after SIGKILL`);
}

export function shuttingDown(): ControlFailure {
  return controlFailure('shutting-down', 'the supervisor is shutting down');
}

export const SILENT_LOGGER: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => SILENT_LOGGER,
};
