import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type {
  ControlFailure,
  RestartReply,
  StartReply,
  StopReply,
  SupervisorState,
  TryRestartReply,
} from './control-protocol.js';
import type { ExitStatus } from './process-group.js';
import { StartLimit } from './start-limit.js';
import { shuttingDown, startLimitHit, stopFailed } from './supervisor-options.js';

/** What the unit needs of a running agent: ProcessGroup in production, a stand-in in unit tests. */
export interface AgentProcess {
  readonly pid: number;
  /** Resolves once it exited; never rejects. */
  readonly exited: Promise<ExitStatus>;
  /** Whether the unit asked it to stop, so its exit is not a failure. */
  readonly stopRequested: boolean;
  /** SIGTERM, SIGKILL after `timeoutMs`; false when it survived even SIGKILL. */
  stop(timeoutMs: number): Promise<boolean>;
}

/** One attempt to start the agent. The launcher reports why a start failed; the unit only counts it. */
export type AgentLaunch = { readonly kind: 'spawned'; readonly agent: AgentProcess } | { readonly kind: 'failed' };

export interface AgentUnitSettings {
  /** Times the start limit and the restart delays, so a test can drive them on virtual time. */
  readonly clock: Clock;
  readonly restartDelayMs: number;
  readonly startLimitBurst: number;
  readonly startLimitIntervalMs: number;
  readonly stopTimeoutMs: number;
  readonly launch: () => Promise<AgentLaunch>;
  /** OnFailure=: called once each time the start limit puts the unit into 'failed' (not on the queue). */
  readonly onFailed: () => void;
  readonly logger: Logger;
}

export interface UnitStatus {
  readonly state: SupervisorState;
  readonly mainPid: number | null;
  /** Automatic restarts since the last manual start or reset (systemd's NRestarts), and this run's id. */
  readonly restarts: number;
  readonly runId: string;
}

type StartOutcome = 'spawned' | 'spawn-failed' | 'limit-hit';

/**
 * The agent as systemd runs a unit: one main process, Restart=on-failure after restartDelayMs,
 * a start limit that ends in 'failed', and try-restart after a delay. It knows nothing of
 * sockets or processes: the supervisor hands it a launcher, so its decisions can be tested
 * on the memory clock without spawning anything.
 *
 * Every state change that starts or stops the agent runs through one serial queue, so restarts,
 * stops and delayed restarts never interleave and at most one agent runs; only the agent's exit
 * and `status` act outside it. Until `open` and after `close` nothing is queued.
 */
export class AgentUnit {
  private state: SupervisorState = 'inactive';
  private agent: AgentProcess | null = null;
  private readonly startLimit: StartLimit;
  private accepting = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** The pending automatic restart; a fired timer runs only while it is still the pending one. */
  private pendingRestart: AbortController | null = null;
  private readonly tryRestarts = new Set<AbortController>();
  /** Counted as systemd counts NRestarts: automatic restarts, zeroed by a manual start or a reset. */
  private restarts = 0;
  /** The count lives as long as this supervisor. */
  private readonly runId = randomUUID();

  constructor(private readonly settings: AgentUnitSettings) {
    this.startLimit = new StartLimit(settings.startLimitBurst, settings.startLimitIntervalMs);
  }

  status(): UnitStatus {
    return { state: this.state, mainPid: this.agent?.pid ?? null, restarts: this.restarts, runId: this.runId };
  }

  /** From now on requests and timers are queued. */
  open(): void {
    this.accepting = true;
  }

  /**
   * Refuses everything from now on, cancels the timers and stops the agent, queued behind any
   * operation in flight so that it stops the agent that operation started.
   */
  close(): Promise<void> {
    this.accepting = false;
    for (const timer of this.tryRestarts) timer.abort();
    this.tryRestarts.clear();
    this.cancelAutoRestart();
    return this.enqueue(async () => {
      const agent = this.agent;
      if (agent !== null && !(await agent.stop(this.settings.stopTimeoutMs)))
        this.settings.logger.error({ pid: agent.pid }, 'The agent did not exit even after SIGKILL; leaving it behind.');
      this.state = 'inactive';
    });
  }

  /** `systemctl restart`; `resetFailed` first forgets the counted starts (`reset-failed`). */
  restart(resetFailed: boolean): Promise<RestartReply | ControlFailure> {
    return this.serialReply(() => this.restartNow(resetFailed));
  }

  /** `systemctl stop`. */
  stop(): Promise<StopReply | ControlFailure> {
    return this.serialReply(() => this.stopNow());
  }

  /** `systemctl start`. */
  start(): Promise<StartReply | ControlFailure> {
    return this.serialReply(() => this.startNow());
  }

  /** `systemctl try-restart` after `delayMs`: an agent stopped or failed meanwhile is left alone. */
  tryRestartAfter(delayMs: number): TryRestartReply | ControlFailure {
    if (!this.accepting) return shuttingDown();
    const timer = new AbortController();
    this.tryRestarts.add(timer);
    this.after(delayMs, timer.signal, () => {
      this.tryRestarts.delete(timer);
      void this.serial(async () => {
        if (this.state !== 'active' && this.state !== 'activating') return;
        const reply = await this.restartNow(false);
        if (!reply.ok) this.settings.logger.warn({ code: reply.error.code }, 'The delayed restart failed.');
      });
    });
    return { ok: true, scheduled: true };
  }

  private async restartNow(resetFailed: boolean): Promise<RestartReply | ControlFailure> {
    // A reset or rejoined host stopped the agent on purpose: it stays stopped (as the systemd adapter does).
    if (this.state === 'inactive') return { ok: true, restarted: false };
    if (resetFailed) {
      this.startLimit.reset();
      this.restarts = 0;
    }
    this.cancelAutoRestart();
    const agent = this.agent;
    if (agent !== null) {
      this.state = 'activating';
      if (!(await this.stopAgent(agent))) {
        // It still runs: report it as it is, so its eventual exit leaves the service inactive.
        this.state = 'active';
        return stopFailed(agent.pid);
      }
    }
    const outcome = await this.startAgent();
    if (outcome === 'limit-hit') return startLimitHit();
    return { ok: true, restarted: true };
  }

  private async stopNow(): Promise<StopReply | ControlFailure> {
    this.cancelAutoRestart();
    // Like `systemctl stop` on a failed unit: nothing runs, and the failure stays visible until a restart.
    if (this.state === 'failed' || this.state === 'inactive') return { ok: true, stopped: false };
    const agent = this.agent;
    if (agent !== null && !(await this.stopAgent(agent))) return stopFailed(agent.pid);
    this.state = 'inactive';
    this.settings.logger.info({}, 'The agent was stopped on request.');
    return { ok: true, stopped: true };
  }

  private async startNow(): Promise<StartReply | ControlFailure> {
    if (this.state === 'active' || this.state === 'activating') return { ok: true, started: false };
    this.restarts = 0;
    const outcome = await this.startAgent();
    return outcome === 'limit-hit' ? startLimitHit() : { ok: true, started: true };
  }

  /** Stops `agent`; false when it survived SIGKILL (it stays the main process then). */
  private async stopAgent(agent: AgentProcess): Promise<boolean> {
    const stopped = await agent.stop(this.settings.stopTimeoutMs);
    if (!stopped) this.settings.logger.error({ pid: agent.pid }, 'The agent did not exit even after SIGKILL.');
    return stopped;
  }

  /** One start, counted against the start limit. Runs on the queue only. */
  private async startAgent(): Promise<StartOutcome> {
    // Never two agents: a start while one runs is a bug elsewhere, not a reason to fork again.
    if (this.agent !== null) return 'spawned';
    if (!this.startLimit.tryStart(this.settings.clock.monotonicMs())) {
      this.enterFailed();
      return 'limit-hit';
    }
    this.state = 'activating';
    const launched = await this.settings.launch();
    if (launched.kind !== 'spawned') {
      // Like systemd's exit status 203/EXEC: a failed start, restarted and counted like a crash.
      this.scheduleAutoRestart();
      return 'spawn-failed';
    }
    const agent = launched.agent;
    this.agent = agent;
    this.state = 'active';
    void agent.exited.then((status) => this.onExit(agent, status));
    return 'spawned';
  }

  /** Restart=on-failure: a clean exit ends the service, anything else the unit did not ask for restarts it. */
  private onExit(agent: AgentProcess, status: ExitStatus): void {
    if (this.agent !== agent) return;
    this.agent = null;
    const { logger } = this.settings;
    if (agent.stopRequested) {
      // The stopper sets the next state right after this; but one that gave up on a stuck
      // agent is gone, and a late exit must not leave 'active' without a process.
      if (this.state === 'active') this.state = 'inactive';
      return;
    }
    if (status.signal === null && status.code === 0) {
      this.state = 'inactive';
      logger.info({ pid: agent.pid }, 'The agent exited cleanly; it is not restarted.');
      return;
    }
    logger.warn({ pid: agent.pid, code: status.code, signal: status.signal }, 'The agent failed.');
    if (this.accepting) this.scheduleAutoRestart();
    else this.state = 'inactive';
  }

  private scheduleAutoRestart(): void {
    this.cancelAutoRestart();
    // Closing: the final stop, queued already, settles the state.
    if (!this.accepting) return;
    this.state = 'activating';
    const pending = new AbortController();
    this.pendingRestart = pending;
    this.after(this.settings.restartDelayMs, pending.signal, () => {
      void this.serial(async () => {
        // A restart, stop or close since then replaced or cancelled this one.
        if (this.pendingRestart !== pending) return;
        this.pendingRestart = null;
        this.restarts += 1;
        await this.startAgent();
      });
    });
  }

  private cancelAutoRestart(): void {
    this.pendingRestart?.abort();
    this.pendingRestart = null;
  }

  /** The start limit was hit: stop restarting and run the on-failure hook, once per failure. */
  private enterFailed(): void {
    this.cancelAutoRestart();
    this.state = 'failed';
    this.settings.logger.error(
      { burst: this.settings.startLimitBurst, intervalMs: this.settings.startLimitIntervalMs },
      'The agent failed too often; the supervisor stopped restarting it.',
    );
    if (this.accepting) this.settings.onFailed();
  }

  /** Runs `task` once `delayMs` passed on the clock, unless `cancel` aborted first. */
  private after(delayMs: number, cancel: AbortSignal, task: () => void): void {
    this.settings.clock.sleep(delayMs, cancel).then(task, () => undefined);
  }

  /** Queues `task` unless the unit is closed (or not open yet). */
  private serial<T>(task: () => Promise<T>): Promise<T | 'closed'> {
    if (!this.accepting) return Promise.resolve('closed');
    return this.enqueue<T | 'closed'>(() => (this.accepting ? task() : Promise.resolve('closed' as const)));
  }

  private async serialReply<R>(task: () => Promise<R | ControlFailure>): Promise<R | ControlFailure> {
    const reply = await this.serial(task);
    return reply === 'closed' ? shuttingDown() : reply;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    // The queue continues after a failed task; the caller still sees the failure.
    this.queue = run.catch(() => undefined);
    return run;
  }
}
