import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import { SystemClock } from '../../common/runtime/system-clock.js';
import { agentRecordPath, removeAgentRecord } from './agent-record.js';
import { startAgent } from './agent-start.js';
import { AgentUnit, type AgentLaunch, type UnitStatus } from './agent-unit.js';
import { ControlServer } from './control-server.js';
import type { ControlReply, ControlRequest } from './control-protocol.js';
import { findDeathSignalLauncher } from './death-signal.js';
import { FailureHookSlot } from './failure-hook.js';
import { SupervisorError } from './supervisor-error.js';
import { SILENT_LOGGER, validateOptions, type SupervisorOptions } from './supervisor-options.js';

export type { SupervisorOptions } from './supervisor-options.js';

/** The environment variable that tells the on-failure hook where to call back. */
export const SUPERVISOR_SOCKET_VARIABLE = 'AGENT_UPGRADE_SUPERVISOR_SOCKET';

/**
 * The agent's unit, and whether the on-failure hook still runs: a host is quiet only once both
 * settled, since the hook (`recover`) takes the host lock.
 */
export interface SupervisorStatus extends UnitStatus {
  readonly failureHook: 'running' | 'idle';
}

/**
 * A small service manager for hosts without systemd
 * (docs/operations.md#supervisor-hosts-without-systemd): runs the agent as one child with
 * systemd's Restart=on-failure, start limit and OnFailure= semantics (agent-unit.ts), and
 * answers the control protocol (control-protocol.ts) that SupervisorServiceManager speaks.
 *
 * Never two agents across supervisors either: the agent dies with a supervisor killed by SIGKILL
 * (death-signal.ts), and what survives that is found through the agent record and stopped
 * before the next start (agent-record.ts, orphan.ts).
 */
export class Supervisor {
  private readonly unit: AgentUnit;
  private readonly logger: Logger;
  private server: ControlServer | null = null;
  private lifecycle: 'new' | 'running' | 'closing' = 'new';
  private closed: Promise<void> | null = null;
  private readonly hook = new FailureHookSlot();
  private readonly recordPath: string;
  private launcher: string | null = null;

  constructor(private readonly options: SupervisorOptions) {
    validateOptions(options);
    this.logger = (options.logger ?? SILENT_LOGGER).child({ component: 'supervisor' });
    this.recordPath = agentRecordPath(options.controlSocket);
    const clock: Clock = options.clock ?? new SystemClock();
    this.unit = new AgentUnit({
      clock,
      restartDelayMs: options.restartDelayMs,
      startLimitBurst: options.startLimitBurst,
      startLimitIntervalMs: options.startLimitIntervalMs,
      stopTimeoutMs: options.stopTimeoutMs,
      launch: () => this.launch(),
      onFailed: () => this.runFailureHook(),
      logger: this.logger,
    });
  }

  /**
   * Listens on the control socket, then starts the agent. Refuses (SupervisorError
   * 'already-running') before starting anything when another supervisor owns the socket.
   */
  async start(): Promise<void> {
    if (this.lifecycle !== 'new') throw new SupervisorError('invalid-state', 'the supervisor was already started');
    this.lifecycle = 'running';
    this.unit.open();
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
      await this.unit.close();
      throw error;
    }
    // close() ran while the socket was being bound: it could not close what did not exist yet.
    if (this.lifecycle !== 'running') {
      await server.close();
      throw new SupervisorError('invalid-state', 'the supervisor was closed while it started');
    }
    this.server = server;
    this.logger.info({ path: this.options.controlSocket }, 'The supervisor is listening on its control socket.');
    await this.unit.start();
  }

  /** Stops the agent (SIGTERM, SIGKILL after stopTimeoutMs) and any running hook, and removes the socket. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  status(): SupervisorStatus {
    return { ...this.unit.status(), failureHook: this.hook.isRunning ? 'running' : 'idle' };
  }

  /** Answers one control request (the control socket's handler; callable in-process too). */
  async handle(request: ControlRequest): Promise<ControlReply> {
    switch (request.op) {
      case 'status':
        return { ok: true, ...this.status() };
      case 'restart':
        return this.unit.restart(request.resetFailed === true);
      case 'try-restart':
        return this.unit.tryRestartAfter(request.delayMs);
      case 'stop':
        return this.unit.stop();
      case 'start':
        return this.unit.start();
    }
  }

  private async shutDown(): Promise<void> {
    const wasRunning = this.lifecycle === 'running';
    this.lifecycle = 'closing';
    // From here on no request or timer starts the agent again; the stop is queued behind what runs.
    const stopped = this.unit.close();
    if (!wasRunning) return stopped;
    await this.server?.close();
    await stopped;
    await this.hook.stop(this.options.stopTimeoutMs);
    this.logger.info({}, 'The supervisor stopped.');
  }

  /** One start of the agent process, with its record (agent-start.ts); the unit decides when. */
  private async launch(): Promise<AgentLaunch> {
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
      // An orphan that survived SIGKILL fails the start the same way: two agents would be worse.
      this.logger.warn(
        { path: execStart, code: outcome.kind === 'spawn-failed' ? outcome.code : 'ORPHAN_SURVIVED' },
        'The agent could not be started.',
      );
      return { kind: 'failed' };
    }
    const group = outcome.group;
    // Registered before the unit sees the agent, so the record is gone before any restart starts another.
    void group.exited.then(() => removeAgentRecord(this.recordPath, group.pid));
    this.logger.info({ pid: group.pid, path: execStart }, 'The agent started.');
    return { kind: 'spawned', agent: group };
  }

  private runFailureHook(): void {
    const hook = this.options.onFailure;
    if (hook === null || this.lifecycle !== 'running') return;
    // Not on the queue: the hook is expected to call back (restart), which is queued.
    this.hook.start(hook, { ...process.env, [SUPERVISOR_SOCKET_VARIABLE]: this.options.controlSocket }, this.logger);
  }
}
