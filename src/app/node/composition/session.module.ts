import { randomBytes } from 'node:crypto';
import { ContainerModule } from 'inversify';
import { AgentUpgradeHandler } from '../managed/agent-upgrade-handler.js';
import { AgentVersionReport } from '../managed/agent-version-report.js';
import { ManagedSession } from '../managed/managed-session.js';
import type { SessionOptions } from '../managed/session-options.js';
import { StartupGate } from '../managed/startup-gate.js';
import { WatchEffects } from '../health/watch-effects.js';
import { Tokens as T } from '../tokens.js';
import { bindBuilt, type Bind } from '../../common/composition/bind-built.js';

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
    bindGate(bind);
    bindHandlerAndSession(bind);
  });
}

/** The startup gate of this session: the record left by an earlier process, resolved first. */
function bindGate(bind: Bind): void {
  const gate = {
    effects: T.HostEffects,
    records: T.RecordStore,
    states: T.StateStore,
    store: T.OperationStore,
    services: T.ServiceManager,
    health: T.HealthGate,
    watches: T.WatchStore,
    clock: T.Clock,
    logger: T.Logger,
    config: T.Config,
    state: T.SessionState,
    options: T.SessionOptions,
  };
  bindBuilt(bind, T.StartupGate, gate, ({ logger, state, options, watches, ...dependencies }) => {
    const gateLogger = logger.child({ component: 'startup-gate' });
    const mode = dependencies.config.agent.mode;
    return new StartupGate({
      ...dependencies,
      watching: new WatchEffects({
        ...dependencies,
        gate: dependencies.health,
        watches,
        logger: gateLogger,
        mode,
        owner: 'managed',
        pollMs: dependencies.config.health.pollMs,
      }),
      logger: gateLogger,
      mode,
      instanceId: state.instanceId,
      selfExecutable: options.selfExecutable,
      handedOver: () => state.handedOver,
    });
  });
}

/** The AgentUpgrade handler and the session over the gate and the handler. */
function bindHandlerAndSession(bind: Bind): void {
  const handler = {
    fs: T.FileSystem,
    runner: T.ProcessRunner,
    clock: T.Clock,
    source: T.ArtifactSource,
    extractor: T.ArchiveExtractor,
    trust: T.ReleaseTrust,
    logger: T.Logger,
    config: T.Config,
    arch: T.Architecture,
    engine: T.LayoutEngine,
    effects: T.SlotEffects,
    records: T.RecordStore,
    states: T.StateStore,
    lock: T.HostLock,
    store: T.OperationStore,
    services: T.ServiceManager,
    container: T.ContainerRootfs,
    interrupted: T.InterruptedActivation,
    state: T.SessionState,
  };
  bindBuilt(bind, T.AgentUpgradeHandler, handler, ({ state, ...dependencies }) => {
    return new AgentUpgradeHandler({ ...dependencies, instanceId: state.instanceId });
  });
  const session = {
    gate: T.StartupGate,
    handler: T.AgentUpgradeHandler,
    interrupted: T.InterruptedActivation,
    lock: T.HostLock,
    engine: T.LayoutEngine,
    config: T.Config,
    state: T.SessionState,
    versions: T.AgentVersionReport,
  };
  bindBuilt(bind, T.ManagedSession, session, (dependencies) => new ManagedSession(dependencies));
  const versions = {
    fs: T.FileSystem,
    runner: T.ProcessRunner,
    clock: T.Clock,
    engine: T.LayoutEngine,
    states: T.StateStore,
    config: T.Config,
    store: T.OperationStore,
    logger: T.Logger,
    trust: T.ReleaseTrust,
  };
  bindBuilt(bind, T.AgentVersionReport, versions, ({ logger, ...dependencies }) => {
    return new AgentVersionReport({ ...dependencies, logger: logger.child({ component: 'agent-version' }) });
  });
}
