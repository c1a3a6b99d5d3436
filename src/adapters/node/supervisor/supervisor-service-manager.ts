import type { Clock } from '../../../ports/common/clock.js';
import { ServiceError } from '../../../domain/common/port-errors.js';
import type { RestartObservation, ServiceActivity, ServiceManager } from '../../../ports/node/service-manager.js';
import { SampledMainProcess } from '../service/sampled-main-process.js';
import { sampleOf, type MainProcessObservation } from '../service/stable-executable.js';
import { agentRecordPath, liveRecordedAgent, readAgentRecord } from './agent-record.js';
import { ControlClientError, requestSupervisor } from './control-client.js';
import type { ControlFailure, ControlOp, ControlRequest, ReplyFor, StatusReply } from './control-protocol.js';

/** The managed path's hand-over waits this long, so the calling daemon can return first (as with systemd). */
export const SCHEDULED_RESTART_DELAY_MS = 2000;

/** Bound on a status or try-restart request: both are answered at once by a healthy supervisor. */
export const REQUEST_TIMEOUT_MS = 5000;

/**
 * Bound on a restart request, which is answered only after the old agent stopped: it must exceed
 * the supervisor's stopTimeoutMs (systemd's TimeoutStopSec=60 is the usual value) plus a spawn.
 */
export const RESTART_TIMEOUT_MS = 90_000;

export interface SupervisorServiceManagerOptions {
  readonly controlSocket: string;
  readonly clock: Clock;
  /** Where `<pid>/exe` is read; `/proc` unless the supervisor runs in another PID namespace. */
  readonly procRoot?: string;
  readonly requestTimeoutMs?: number;
  readonly restartTimeoutMs?: number;
  /** scheduleRestart's delay. */
  readonly restartDelayMs?: number;
}

/**
 * The ServiceManager port over the built-in supervisor's control socket
 * (docs/operations.md#supervisor-hosts-without-systemd), with the systemd adapter's semantics: a
 * failed agent is reset and restarted, an inactive or absent one stays stopped, the managed
 * hand-over is a delayed try-restart run by the supervisor (outside the agent's process tree), and
 * health is the main process's executable, stable for stableMs.
 *
 * With no supervisor listening, the agent record (agent-record.ts) tells an absent service from
 * an agent that outlived a supervisor killed by SIGKILL (the parent-death signal normally
 * prevents that; see death-signal.ts). Such an orphan is reported as it is: activity 'unknown'
 * (nothing manages it, so callers that would act on the service refuse), its executable as the
 * main process's and judged by the same health rule, and restarts fail — claiming it stopped
 * would leave it running beside the agent the next supervisor starts, and claiming a restart
 * would be false.
 */
export class SupervisorServiceManager extends SampledMainProcess implements ServiceManager {
  readonly name = 'supervisor' as const;

  protected readonly healthClock: Clock;

  constructor(private readonly options: SupervisorServiceManagerOptions) {
    super();
    this.healthClock = options.clock;
  }

  /** Nothing to write: the supervisor reads its settings from configuration. */
  async convergeAssets(): Promise<{ readonly changed: boolean }> {
    return { changed: false };
  }

  async assetsCurrent(): Promise<boolean> {
    return true;
  }

  async activity(): Promise<ServiceActivity> {
    const status = await this.status();
    if (status === 'absent') return 'absent';
    if ('orphanPid' in status) return 'unknown';
    // 'activating' is the restart delay or a start in progress: systemd's adapter reports it as active too.
    return status.state === 'activating' ? 'active' : status.state;
  }

  /** The supervisor keeps no run ids; its hook runs `recover` while the unit is still failed. */
  async currentRun(): Promise<string | null> {
    return null;
  }

  async restart(options: { readonly resetFailed?: boolean } = {}): Promise<{ readonly restarted: boolean }> {
    const status = await this.status();
    if (status !== 'absent' && 'orphanPid' in status) throw unsupervised(status.orphanPid, 'restart');
    // A reset or rejoined host stopped the agent on purpose: it stays stopped.
    if (status === 'absent' || status.state === 'inactive') return { restarted: false };
    // Like the systemd adapter, a failed agent's start counter is cleared, or the restart would be refused.
    const resetFailed = options.resetFailed === true || status.state === 'failed';
    const reply = await this.call({ op: 'restart', resetFailed }, this.options.restartTimeoutMs ?? RESTART_TIMEOUT_MS);
    return reply === 'absent' ? { restarted: false } : { restarted: reply.restarted };
  }

  async scheduleRestart(): Promise<void> {
    const delayMs = this.options.restartDelayMs ?? SCHEDULED_RESTART_DELAY_MS;
    // With no supervisor there is no agent to restart, as a try-restart of a missing unit does nothing.
    if ((await this.call({ op: 'try-restart', delayMs }, this.requestTimeoutMs())) !== 'absent') return;
    const orphanPid = this.orphanPid();
    if (orphanPid !== null) throw unsupervised(orphanPid, 'restart');
  }

  /** The supervisor's own count; none from an orphan, an absent or an older supervisor. */
  async restartCount(): Promise<RestartObservation> {
    const status = await this.status();
    if (status === 'absent' || 'orphanPid' in status || status.restarts === undefined || status.runId === undefined)
      return { restartEpoch: null, restarts: null };
    return { restartEpoch: status.runId, restarts: status.restarts };
  }

  protected async sample(): Promise<MainProcessObservation> {
    const status = await this.status();
    if (status === 'absent') return null;
    if ('orphanPid' in status) return sampleOf(status.orphanPid, this.options.procRoot);
    if (status.state === 'failed') return 'gave-up';
    return status.mainPid === null ? null : sampleOf(status.mainPid, this.options.procRoot);
  }

  private async status(): Promise<StatusReply | Orphan | 'absent'> {
    const reply = await this.call({ op: 'status' }, this.requestTimeoutMs());
    if (reply !== 'absent') return reply;
    const orphanPid = this.orphanPid();
    return orphanPid === null ? 'absent' : { orphanPid };
  }

  /** The agent a dead supervisor recorded, when that very process still runs. */
  private orphanPid(): number | null {
    return liveRecordedAgent(readAgentRecord(agentRecordPath(this.options.controlSocket)), this.options.procRoot);
  }

  private requestTimeoutMs(): number {
    return this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** One request; 'absent' when no supervisor listens, ServiceError for every other failure. */
  private async call<Op extends ControlOp>(
    request: ControlRequest & { readonly op: Op },
    timeoutMs: number,
  ): Promise<ReplyFor[Op] | 'absent'> {
    let reply: ReplyFor[Op] | ControlFailure;
    try {
      reply = await requestSupervisor<Op>(this.options.controlSocket, request, timeoutMs);
    } catch (error) {
      if (!(error instanceof ControlClientError)) throw error;
      if (error.kind === 'unreachable') return 'absent';
      throw new ServiceError(error.kind === 'timeout' ? 'timeout' : 'command-failed', error.message);
    }
    if (!reply.ok)
      throw new ServiceError(
        'command-failed',
        `the supervisor refused ${request.op}: ${reply.error.code}: ${reply.error.message}`,
      );
    return reply;
  }
}

/** An agent whose supervisor died: it runs, but nothing can restart or stop it on request. */
interface Orphan {
  readonly orphanPid: number;
}

function unsupervised(pid: number, action: string): ServiceError {
  return new ServiceError(
    'command-failed',
    `cannot ${action} the agent: its supervisor is not running, but the agent it started (pid ${pid}) still does; start the supervisor, which stops it and starts the agent afresh`,
  );
}
