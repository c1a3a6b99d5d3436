import { performance } from 'node:perf_hooks';
import type { Logger } from '../../ports/logger.js';
import { agentRecordPath, removeAgentRecord } from './agent-record.js';
import { startAgent } from './agent-start.js';
import { ControlServer } from './control-server.js';
import type {
  ControlFailure,
  ControlReply,
  ControlRequest,
  RestartReply,
  StartReply,
  StopReply,
  SupervisorState,
} from './control-protocol.js';
import { findDeathSignalLauncher } from './death-signal.js';
import { ProcessGroup, type ExitStatus } from './process-group.js';
import { StartLimit } from './start-limit.js';
import { SupervisorError } from './supervisor-error.js';
import { FailureHookSlot } from './failure-hook.js';
import {
  shuttingDown,
  SILENT_LOGGER,
  startLimitHit,
  stopFailed,
  validateOptions,
  type SupervisorOptions,
} from './supervisor-options.js';

export type { SupervisorOptions } from './supervisor-options.js';

/** The environment variable that tells the on-failure hook where to call back. */
export const SUPERVISOR_SOCKET_VARIABLE = 'AGENT_UPGRADE_SUPERVISOR_SOCKET';

export interface SupervisorStatus {
  readonly state: SupervisorState;
  readonly mainPid: number | null;
}

type StartOutcome = 'spawned' | 'spawn-failed' | 'limit-hit';

/**
 * A small service manager for hosts without systemd
 * (docs/operations.md#supervisor-hosts-without-systemd): runs the agent as one child with
 * systemd's Restart=on-failure, start limit and OnFailure= semantics, and answers the control
 * protocol (control-protocol.ts) that SupervisorServiceManager speaks.
 *
 * Every state change that starts or stops the child runs through one serial queue, so restarts,
 * stops and delayed restarts never interleave and at most one agent runs; only the child's exit
 * and `status` act outside it.
 *
 * Never two agents across supervisors either: the agent dies with a supervisor killed by SIGKILL
 * (death-signal.ts), and what survives that is found through the agent record and stopped
 * before the next start (agent-record.ts, orphan.ts).
 */
export class Supervisor {
  private state: SupervisorState = 'inactive';
  private child: ProcessGroup | null = null;
  private readonly startLimit: StartLimit;
  private readonly logger: Logger;
  private server: ControlServer | null = null;
  private lifecycle: 'new' | 'running' | 'closing' = 'new';
  private closed: Promise<void> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** The pending automatic restart; its token tells a fired timer whether it is still wanted. */
  private pendingRestart: { readonly token: object; readonly timer: NodeJS.Timeout } | null = null;
  private readonly tryRestartTimers = new Set<NodeJS.Timeout>();
  private readonly hook = new FailureHookSlot();
  private readonly recordPath: string;
  private launcher: string | null = null;

  constructor(private readonly options: SupervisorOptions) {
    validateOptions(options);
    this.startLimit = new StartLimit(options.startLimitBurst, options.startLimitIntervalMs);
    this.logger = (options.logger ?? SILENT_LOGGER).child({ component: 'supervisor' });
    this.recordPath = agentRecordPath(options.controlSocket);
  }

  /**
   * Listens on the control socket, then starts the agent. Refuses (SupervisorError
   * 'already-running') before starting anything when another supervisor owns the socket.
   */
  async start(): Promise<void> {
    if (this.lifecycle !== 'new') throw new SupervisorError('invalid-state', 'the supervisor was already started');
    this.lifecycle = 'running';
    // Before listening: a start request may arrive as soon as the socket exists.
    if (this.options.parentDeathSignal !== false) {
      this.launcher = await findDeathSignalLauncher();
      if (this.launcher === null)
        this.logger.warn(
          {},
          'setpriv with --pdeathsig is not available: an agent outlives a supervisor killed by SIGKILL until the next supervisor stops it.',
        );
    }
    let server: ControlServer;
    try {
      server = await ControlServer.listen({
        socketPath: this.options.controlSocket,
        handler: (request) => this.handle(request),
        ...(this.options.controlReadTimeoutMs === undefined
          ? {}
          : { readTimeoutMs: this.options.controlReadTimeoutMs }),
      });
    } catch (error) {
      this.lifecycle = 'closing';
      throw error;
    }
    // close() ran while the socket was being bound: it could not close what did not exist yet.
    if (this.lifecycle !== 'running') {
      await server.close();
      throw new SupervisorError('invalid-state', 'the supervisor was closed while it started');
    }
    this.server = server;
    this.logger.info({ path: this.options.controlSocket }, 'The supervisor is listening on its control socket.');
    await this.serial(() => this.startChild());
  }

  /** Stops the agent (SIGTERM, SIGKILL after stopTimeoutMs) and any running hook, and removes the socket. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  status(): SupervisorStatus {
    return { state: this.state, mainPid: this.child?.pid ?? null };
  }

  /** Answers one control request (the control socket's handler; callable in-process too). */
  async handle(request: ControlRequest): Promise<ControlReply> {
    switch (request.op) {
      case 'status':
        return { ok: true, ...this.status() };
      case 'restart':
        return this.serialReply(() => this.restartNow(request.resetFailed === true));
      case 'try-restart':
        if (this.lifecycle !== 'running') return shuttingDown();
        this.scheduleTryRestart(request.delayMs);
        return { ok: true, scheduled: true };
      case 'stop':
        return this.serialReply(() => this.stopNow());
      case 'start':
        return this.serialReply(() => this.startNow());
    }
  }

  private async shutDown(): Promise<void> {
    const wasRunning = this.lifecycle === 'running';
    this.lifecycle = 'closing';
    for (const timer of this.tryRestartTimers) clearTimeout(timer);
    this.tryRestartTimers.clear();
    this.cancelAutoRestart();
    if (!wasRunning) return;
    // Close the socket first: no request may start the agent again while it is being stopped.
    await this.server?.close();
    // Queued behind any operation in flight, so it stops the child that operation started.
    await this.enqueue(async () => {
      const child = this.child;
      if (child !== null && !(await child.stop(this.options.stopTimeoutMs))) {
        this.logger.error({ pid: child.pid }, 'The agent did not exit even after SIGKILL; leaving it behind.');
      }
      this.state = 'inactive';
    });
    await this.hook.stop(this.options.stopTimeoutMs);
    this.logger.info({}, 'The supervisor stopped.');
  }

  private async restartNow(resetFailed: boolean): Promise<RestartReply | ControlFailure> {
    // A reset or rejoined host stopped the agent on purpose: it stays stopped (as the systemd adapter does).
    if (this.state === 'inactive') return { ok: true, restarted: false };
    if (resetFailed) this.startLimit.reset();
    this.cancelAutoRestart();
    const child = this.child;
    if (child !== null) {
      this.state = 'activating';
      if (!(await this.stopChild(child))) {
        // It still runs: report it as it is, so its eventual exit leaves the service inactive.
        this.state = 'active';
        return stopFailed(child.pid);
      }
    }
    const outcome = await this.startChild();
    if (outcome === 'limit-hit') return startLimitHit();
    return { ok: true, restarted: true };
  }

  private async stopNow(): Promise<StopReply | ControlFailure> {
    this.cancelAutoRestart();
    // Like `systemctl stop` on a failed unit: nothing runs, and the failure stays visible until a restart.
    if (this.state === 'failed' || this.state === 'inactive') return { ok: true, stopped: false };
    const child = this.child;
    if (child !== null && !(await this.stopChild(child))) return stopFailed(child.pid);
    this.state = 'inactive';
    this.logger.info({}, 'The agent was stopped on request.');
    return { ok: true, stopped: true };
  }

  private async startNow(): Promise<StartReply | ControlFailure> {
    if (this.state === 'active' || this.state === 'activating') return { ok: true, started: false };
    const outcome = await this.startChild();
    return outcome === 'limit-hit' ? startLimitHit() : { ok: true, started: true };
  }

  /** Stops `child`; false when it survived SIGKILL (it stays the main process then). */
  private async stopChild(child: ProcessGroup): Promise<boolean> {
    const stopped = await child.stop(this.options.stopTimeoutMs);
    if (!stopped) this.logger.error({ pid: child.pid }, 'The agent did not exit even after SIGKILL.');
    return stopped;
  }

  /** One start, counted against the start limit. Runs on the queue only. */
  private async startChild(): Promise<StartOutcome> {
    // Never two agents: a start while one runs is a bug elsewhere, not a reason to fork again.
    if (this.child !== null) return 'spawned';
    if (!this.startLimit.tryStart(performance.now())) {
      this.enterFailed();
      return 'limit-hit';
    }
    this.state = 'activating';
    const { execStart, args, stopTimeoutMs } = this.options;
    const outcome = await startAgent({
      execStart,
      args,
      stopTimeoutMs,
      recordPath: this.recordPath,
      launcher: this.launcher,
      logger: this.logger,
    });
    if (outcome.kind !== 'spawned') {
      // Like systemd's exit status 203/EXEC: a failed start, restarted and counted like a crash.
      // An orphan that survived SIGKILL fails the start the same way: two agents would be worse.
      this.logger.warn(
        { path: execStart, code: outcome.kind === 'spawn-failed' ? outcome.code : 'ORPHAN_SURVIVED' },
        'The agent could not be started.',
      );
      this.scheduleAutoRestart();
      return 'spawn-failed';
    }
    const child = outcome.group;
    this.child = child;
    this.state = 'active';
    this.logger.info({ pid: child.pid, path: this.options.execStart }, 'The agent started.');
    void child.exited.then((status) => this.onChildExit(child, status));
    return 'spawned';
  }

  /** Restart=on-failure: a clean exit ends the service, anything else the supervisor did not ask for restarts it. */
  private onChildExit(child: ProcessGroup, status: ExitStatus): void {
    removeAgentRecord(this.recordPath, child.pid);
    if (this.child !== child) return;
    this.child = null;
    if (child.stopRequested) {
      // The stopper sets the next state right after this; but one that gave up on a stuck
      // agent is gone, and a late exit must not leave 'active' without a process.
      if (this.state === 'active') this.state = 'inactive';
      return;
    }
    if (status.signal === null && status.code === 0) {
      this.state = 'inactive';
      this.logger.info({ pid: child.pid }, 'The agent exited cleanly; it is not restarted.');
      return;
    }
    this.logger.warn({ pid: child.pid, code: status.code, signal: status.signal }, 'The agent failed.');
    if (this.lifecycle === 'running') this.scheduleAutoRestart();
    else this.state = 'inactive';
  }

  private scheduleAutoRestart(): void {
    this.cancelAutoRestart();
    this.state = 'activating';
    const token = {};
    const timer = setTimeout(() => {
      void this.serial(async () => {
        // A restart, stop or close since then replaced or cancelled this one.
        if (this.pendingRestart?.token !== token) return;
        this.pendingRestart = null;
        await this.startChild();
      });
    }, this.options.restartDelayMs);
    this.pendingRestart = { token, timer };
  }

  private cancelAutoRestart(): void {
    if (this.pendingRestart === null) return;
    clearTimeout(this.pendingRestart.timer);
    this.pendingRestart = null;
  }

  /** `systemctl try-restart` after `delayMs`: an agent stopped or failed meanwhile is left alone. */
  private scheduleTryRestart(delayMs: number): void {
    const timer = setTimeout(() => {
      this.tryRestartTimers.delete(timer);
      void this.serial(async () => {
        if (this.state !== 'active' && this.state !== 'activating') return;
        const reply = await this.restartNow(false);
        if (!reply.ok) this.logger.warn({ code: reply.error.code }, 'The delayed restart failed.');
      });
    }, delayMs);
    this.tryRestartTimers.add(timer);
  }

  /** The start limit was hit: stop restarting and run the on-failure hook, once per failure. */
  private enterFailed(): void {
    this.cancelAutoRestart();
    this.state = 'failed';
    this.logger.error(
      { burst: this.options.startLimitBurst, intervalMs: this.options.startLimitIntervalMs },
      'The agent failed too often; the supervisor stopped restarting it.',
    );
    const hook = this.options.onFailure;
    if (hook === null || this.lifecycle !== 'running') return;
    // Not on the queue: the hook is expected to call back (restart), which is queued.
    this.hook.start(hook, { ...process.env, [SUPERVISOR_SOCKET_VARIABLE]: this.options.controlSocket }, this.logger);
  }

  /** Queues `task` unless the supervisor is shutting down. */
  private serial<T>(task: () => Promise<T>): Promise<T | 'shutting-down'> {
    if (this.lifecycle !== 'running') return Promise.resolve('shutting-down');
    return this.enqueue<T | 'shutting-down'>(() =>
      this.lifecycle === 'running' ? task() : Promise.resolve('shutting-down' as const),
    );
  }

  private async serialReply(task: () => Promise<ControlReply>): Promise<ControlReply> {
    const reply = await this.serial(task);
    return reply === 'shutting-down' ? shuttingDown() : reply;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    // The queue continues after a failed task; the caller still sees the failure.
    this.queue = run.catch(() => undefined);
    return run;
  }
}
