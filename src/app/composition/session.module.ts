import { randomBytes } from 'node:crypto';
import { ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import type { HostArchitecture } from '../../domain/archive-rules.js';
import type { ArchiveExtractor } from '../../ports/archive-extractor.js';
import type { ArtifactSource } from '../../ports/artifact-source.js';
import type { Clock } from '../../ports/clock.js';
import type { HostLock } from '../../ports/host-lock.js';
import type { Logger } from '../../ports/logger.js';
import type { OperationStore } from '../../ports/operation-store.js';
import type { ServiceManager } from '../../ports/service-manager.js';
import type { ActivationDependencies } from '../activation/activation.js';
import type { InterruptedActivation } from '../activation/interrupted-activation.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import { AgentUpgradeHandler } from '../managed/agent-upgrade-handler.js';
import type { HostEffects } from '../managed/host-effects.js';
import { ManagedSession } from '../managed/managed-session.js';
import type { SessionOptions, SessionState } from '../managed/session-options.js';
import { StartupGate } from '../managed/startup-gate.js';
import type { RecordStore } from '../record/record-store.js';
import type { StateStore } from '../state/state-store.js';
import { Tokens as T } from '../tokens.js';

/**
 * One daemon session, bound in a child of the process's container: the opened operation store,
 * a new instance id, and the gate, handler and session built on the process's shared objects.
 */
export function sessionModule(options: SessionOptions): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(T.OperationStore).toConstantValue(options.store);
    bind(T.SessionOptions).toConstantValue(options);
    const instanceId = options.instanceId ?? randomBytes(16).toString('hex');
    bind(T.SessionState).toConstantValue({ handedOver: false, instanceId });
    bindGate(bind, options.selfExecutable);
    bindHandlerAndSession(bind);
  });
}

/** The startup gate of this session: the record left by an earlier process, resolved first. */
function bindGate(bind: ContainerModuleLoadOptions['bind'], selfExecutable: string | null): void {
  bind(T.StartupGate).toResolvedValue(
    (
      effects: HostEffects,
      records: RecordStore,
      states: StateStore,
      store: OperationStore,
      services: ServiceManager,
      clock: Clock,
      logger: Logger,
      config: UpgraderConfig,
      state: SessionState,
    ) =>
      new StartupGate({
        effects,
        records,
        states,
        store,
        services,
        clock,
        logger: logger.child({ component: 'startup-gate' }),
        config,
        mode: config.agent.mode,
        instanceId: state.instanceId,
        selfExecutable,
        handedOver: () => state.handedOver,
      }),
    [
      T.HostEffects,
      T.RecordStore,
      T.StateStore,
      T.OperationStore,
      T.ServiceManager,
      T.Clock,
      T.Logger,
      T.Config,
      T.SessionState,
    ],
  );
}

/** The AgentUpgrade handler and the session over the gate and the handler. */
function bindHandlerAndSession(bind: ContainerModuleLoadOptions['bind']): void {
  bind(T.AgentUpgradeHandler).toResolvedValue(
    (
      activation: ActivationDependencies,
      lock: HostLock,
      store: OperationStore,
      records: RecordStore,
      states: StateStore,
      source: ArtifactSource,
      extractor: ArchiveExtractor,
      arch: HostArchitecture,
      interrupted: InterruptedActivation,
      state: SessionState,
    ) =>
      new AgentUpgradeHandler({
        ...activation,
        lock,
        store,
        records,
        states,
        source,
        extractor,
        arch,
        interrupted,
        instanceId: state.instanceId,
      }),
    [
      T.ActivationDependencies,
      T.HostLock,
      T.OperationStore,
      T.RecordStore,
      T.StateStore,
      T.ArtifactSource,
      T.ArchiveExtractor,
      T.Architecture,
      T.InterruptedActivation,
      T.SessionState,
    ],
  );
  bind(T.ManagedSession).toResolvedValue(
    (
      gate: StartupGate,
      handler: AgentUpgradeHandler,
      interrupted: InterruptedActivation,
      lock: HostLock,
      engine: LayoutEngine,
      config: UpgraderConfig,
      state: SessionState,
    ) => new ManagedSession({ gate, handler, interrupted, lock, engine, config, state }),
    [
      T.StartupGate,
      T.AgentUpgradeHandler,
      T.InterruptedActivation,
      T.HostLock,
      T.LayoutEngine,
      T.Config,
      T.SessionState,
    ],
  );
}
