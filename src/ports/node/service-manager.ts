import type { RestartObservation } from '../../domain/node/record/watch-window.js';

export type { RestartObservation } from '../../domain/node/record/watch-window.js';

/**
 * The service manager that runs the agent (systemd, the built-in supervisor, or none). Every
 * method is idempotent. Failures are thrown as `ServiceError` (src/domain/common/port-errors.ts).
 */
export type ServiceActivity = 'active' | 'inactive' | 'failed' | 'absent' | 'unknown';

export type HealthVerdict =
  | { readonly kind: 'healthy' }
  | { readonly kind: 'unhealthy'; readonly reason: string }
  | { readonly kind: 'not-running' };

export interface HealthLimits {
  readonly timeoutMs: number;
  readonly stableMs: number;
  readonly pollMs: number;
}

export interface HealthWaitOptions {
  readonly signal?: AbortSignal;
  /** How long the expected binary has run stably so far, after each poll (for display only). */
  readonly onPoll?: (stableMs: number) => void;
}

export interface ServiceManager {
  /**
   * Which platform this is, for status output: the built-in ones are `systemd`, `supervisor`,
   * `none` and `memory`; an embedder's own manager names itself (`pidfile`, `runit`, …).
   */
  readonly name: string;

  /**
   * Writes the agent unit, the recovery unit and the recovery script when they differ from what
   * is installed, then reloads the manager if anything changed. Returns whether it changed.
   */
  convergeAssets(): Promise<{ readonly changed: boolean }>;

  /** Whether the installed assets already match; never changes anything (preflight). */
  assetsCurrent(): Promise<boolean>;

  activity(): Promise<ServiceActivity>;

  /**
   * An id of the agent unit's current run, new at every start, restarts included (systemd's
   * InvocationID, which the recovery unit receives as `$MONITOR_INVOCATION_ID`); `null` when the
   * manager keeps none. `recover` compares it to the run that failed.
   */
  currentRun(): Promise<string | null>;

  /**
   * Restarts the agent and returns once the manager accepted the restart (the direct path's
   * synchronous restart). `resetFailed` first clears a failed state and its start counter (every
   * planned restart: into a candidate, or back to last-good). An inactive or absent service stays stopped: `restarted` is false then.
   */
  restart(options?: { readonly resetFailed?: boolean }): Promise<{ readonly restarted: boolean }>;

  /**
   * Asks the manager to restart the agent a moment from now, from outside the agent's own
   * process tree (a transient unit), and returns at once: the managed path's hand-over, so the
   * calling process — possibly the agent itself — can return cleanly first.
   */
  scheduleRestart(): Promise<void>;

  /**
   * How many times the manager restarted the agent on its own because it failed (systemd's
   * `NRestarts`), and the lifetime that count belongs to (systemd: this boot; the supervisor: its
   * own run). A manual start or `reset-failed` may zero it. Nulls when the manager keeps none.
   * The watch window compares it with the count when the window opened
   * (docs/protocol.md#watch-window).
   */
  restartCount(): Promise<RestartObservation>;

  /** The real path of the executable the agent's main process runs, or `null` when none runs. */
  mainExecutable(): Promise<string | null>;

  /**
   * Waits until the main process runs `expectedPath` (a real path) continuously for
   * `stableMs`, polling every `pollMs`, for at most `timeoutMs`. An aborted `signal` ends the
   * wait at the next poll (the verdict is then not healthy). `onPoll`, when given, is told after
   * each poll how long the main process has run `expectedPath` without interruption (0 when it
   * does not); it is for display only, and a manager may never call it.
   */
  waitHealthy(expectedPath: string, limits: HealthLimits, options?: HealthWaitOptions): Promise<HealthVerdict>;
}
