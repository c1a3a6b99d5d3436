import { randomBytes } from 'node:crypto';
import type { HostArchitecture } from '../../domain/archive-rules.js';
import type { Result } from '../../domain/failure.js';
import type { AgentUpgradeRequest, OperationStore } from '../../ports/operation-store.js';
import type { UpgraderParts } from '../upgrader-parts.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import { runUseCase } from '../failure-signal.js';
import { interruptedActivationFor, type InterruptedActivation } from '../activation/interrupted-activation.js';
import { AgentUpgradeHandler, type HandleOutcome } from './agent-upgrade-handler.js';
import { HostEffects } from './host-effects.js';
import { StartupGate, type GateOutcome } from './startup-gate.js';

export interface ManagedSessionOptions {
  readonly store: OperationStore;
  /** The real path of this process's executable (self-hosted: the daemon is the agent). */
  readonly selfExecutable: string | null;
  /** 32 hex characters, new for every process; generated when absent. */
  readonly instanceId?: string;
}

export type StartOutcome = GateOutcome | { readonly kind: 'busy' };

/**
 * One daemon process's managed path: its startup gate, then AgentUpgrade operations. The gate
 * runs under the host lock, so `recover` from the OnFailure unit or a direct activation never
 * interleaves with it; when the lock is busy the caller runs `start` again later.
 */
export class ManagedSession {
  readonly instanceId: string;
  private readonly gate: StartupGate;
  private readonly handler: AgentUpgradeHandler;
  private readonly interrupted: InterruptedActivation;
  private handedOver = false;

  constructor(
    private readonly parts: UpgraderParts,
    arch: HostArchitecture,
    options: ManagedSessionOptions,
  ) {
    this.instanceId = options.instanceId ?? randomBytes(16).toString('hex');
    const { fs, services, container, engine, config, layout, clock, logger } = parts;
    const records = new RecordStore(fs, layout.record);
    const states = new StateStore(fs, layout.state);
    const effects = new HostEffects({ fs, services, container, engine, config });
    this.gate = new StartupGate({
      effects,
      records,
      states,
      store: options.store,
      services,
      clock,
      logger: logger.child({ component: 'startup-gate' }),
      config,
      mode: config.agent.mode,
      instanceId: this.instanceId,
      selfExecutable: options.selfExecutable,
      handedOver: () => this.handedOver,
    });
    this.interrupted = interruptedActivationFor({ fs, services, container, engine, config, logger });
    this.handler = new AgentUpgradeHandler({
      ...parts,
      arch,
      store: options.store,
      records,
      states,
      instanceId: this.instanceId,
      interrupted: this.interrupted,
    });
  }

  /** The startup gate, then (once it is open) the layout converged, as every daemon start does. */
  start(): Promise<Result<StartOutcome>> {
    return runUseCase(async () => {
      const attempt = await this.parts.lock.tryAcquire();
      if (attempt.kind === 'busy') return { kind: 'busy' } as const;
      try {
        const outcome = await this.gate.run();
        if (outcome.kind !== 'open') return outcome;
        // A direct activation that died before its verdict: a self-hosted daemon may be its
        // candidate, so its own rollback restarts it through the service manager.
        const restart = this.parts.config.agent.mode === 'self-hosted' ? 'scheduled' : 'sync';
        if ((await this.interrupted.resolve({ restart })) === 'rolled-back' && restart === 'scheduled')
          return { kind: 'closed', reason: 'restart-scheduled' } as const;
        await this.parts.engine.migrate();
        return outcome;
      } finally {
        await attempt.lease.release();
      }
    });
  }

  /** One AgentUpgrade operation (the handler takes the host lock itself). */
  handle(request: AgentUpgradeRequest): Promise<Result<HandleOutcome>> {
    return runUseCase(async () => {
      const outcome = await this.handler.handle(request);
      if (outcome.kind === 'handed-over') this.handedOver = true;
      return outcome;
    });
  }
}
