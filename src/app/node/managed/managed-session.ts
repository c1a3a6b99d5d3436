import type { Result } from '../../../domain/common/failure.js';
import type { HostLock } from '../../../ports/node/host-lock.js';
import type { AgentUpgradeRequest } from '../../../ports/node/operation-store.js';
import type { InterruptedActivation } from '../activation/interrupted-activation.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { runUseCase } from '../../common/failure-signal.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import { withHostLock } from '../lock/with-host-lock.js';
import type { AgentUpgradeHandler, HandleOutcome } from './agent-upgrade-handler.js';
import type { AgentVersionReport, VersionReportOutcome } from './agent-version-report.js';
import type { SessionOptions, SessionState } from './session-options.js';
import type { GateOutcome, StartupGate } from './startup-gate.js';

export type { SessionOptions as ManagedSessionOptions } from './session-options.js';

/** A new daemon session over an opened store (a child container per session). */
export type ManagedSessionFactory = (options: SessionOptions) => ManagedSession;

export type StartOutcome = GateOutcome | { readonly kind: 'busy' };

export interface ManagedSessionDependencies {
  readonly gate: StartupGate;
  readonly handler: AgentUpgradeHandler;
  readonly interrupted: InterruptedActivation;
  readonly lock: HostLock;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
  readonly state: SessionState;
  /** The version evidence of this session: what it last wrote to its Node. */
  readonly versions: AgentVersionReport;
}

/**
 * One daemon process's managed path: its startup gate, then AgentUpgrade operations. The gate
 * runs under the host lock, so `recover` from the OnFailure unit or a direct activation never
 * interleaves with it; when the lock is busy the caller runs `start` again later.
 */
export class ManagedSession {
  constructor(private readonly deps: ManagedSessionDependencies) {}

  get instanceId(): string {
    return this.deps.state.instanceId;
  }

  /**
   * The startup gate, then (once it is open) the layout converged, as every daemon start does,
   * and the agent version that now runs reported to this machine's Node: learnt under the lock,
   * written after it (one attempt, whose failure is logged and left to `retryVersionReport`).
   */
  start(): Promise<Result<StartOutcome>> {
    return runUseCase(async () => {
      const run = await withHostLock(this.deps.lock, async () => {
        const outcome = await this.startUnderLock();
        const report = outcome.kind === 'open' ? await this.deps.versions.observe() : null;
        return { outcome, report };
      });
      if (run.kind === 'busy') return { kind: 'busy' } as const;
      if (run.value.outcome.kind === 'open') await this.deps.versions.offer(run.value.report);
      return run.value.outcome;
    });
  }

  /** Whether the agent version this session learnt is still to be written (its write failed). */
  get versionReportPending(): boolean {
    return this.deps.versions.pending;
  }

  /** The failed version report, tried again (a no-op when nothing is pending). */
  retryVersionReport(): Promise<Result<VersionReportOutcome>> {
    return runUseCase(() => this.deps.versions.retry());
  }

  /** One AgentUpgrade operation (the handler takes the host lock itself). */
  handle(request: AgentUpgradeRequest): Promise<Result<HandleOutcome>> {
    return runUseCase(async () => {
      const outcome = await this.deps.handler.handle(request);
      if (outcome.kind === 'handed-over') this.deps.state.handedOver = true;
      return outcome;
    });
  }

  private async startUnderLock(): Promise<StartOutcome> {
    const outcome = await this.deps.gate.run();
    if (outcome.kind !== 'open') return outcome;
    // A direct activation that died before its verdict: a self-hosted daemon may be its
    // candidate, so its own rollback restarts it through the service manager.
    const restart = this.deps.config.agent.mode === 'self-hosted' ? 'scheduled' : 'sync';
    const resolved = await this.deps.interrupted.resolve({ restart });
    if (resolved === 'rolled-back' && restart === 'scheduled') return { kind: 'closed', reason: 'restart-scheduled' };
    await this.deps.engine.migrate();
    return outcome;
  }
}
