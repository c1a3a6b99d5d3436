import { randomBytes } from 'node:crypto';
import { ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import { AgentUpgradeHandler } from '../managed/agent-upgrade-handler.js';
import { AgentVersionReport } from '../managed/agent-version-report.js';
import { ManagedSession } from '../managed/managed-session.js';
import type { SessionOptions } from '../managed/session-options.js';
import { StartupGate } from '../managed/startup-gate.js';
import { Tokens as T } from '../tokens.js';
import { resolveAll } from './resolve-all.js';

type Bind = ContainerModuleLoadOptions['bind'];

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
  bind(T.StartupGate).toDynamicValue((c) => {
    const state = c.get(T.SessionState);
    const config = c.get(T.Config);
    return new StartupGate({
      ...resolveAll(c, {
        effects: T.HostEffects,
        records: T.RecordStore,
        states: T.StateStore,
        store: T.OperationStore,
        services: T.ServiceManager,
        clock: T.Clock,
      }),
      logger: c.get(T.Logger).child({ component: 'startup-gate' }),
      config,
      mode: config.agent.mode,
      instanceId: state.instanceId,
      selfExecutable: c.get(T.SessionOptions).selfExecutable,
      handedOver: () => state.handedOver,
    });
  });
}

/** The AgentUpgrade handler and the session over the gate and the handler. */
function bindHandlerAndSession(bind: Bind): void {
  bind(T.AgentUpgradeHandler).toDynamicValue(
    (c) =>
      new AgentUpgradeHandler({
        ...c.get(T.ActivationDependencies),
        ...resolveAll(c, {
          lock: T.HostLock,
          store: T.OperationStore,
          source: T.ArtifactSource,
          extractor: T.ArchiveExtractor,
        }),
        instanceId: c.get(T.SessionState).instanceId,
      }),
  );
  bind(T.ManagedSession).toDynamicValue(
    (c) =>
      new ManagedSession(
        resolveAll(c, {
          gate: T.StartupGate,
          handler: T.AgentUpgradeHandler,
          interrupted: T.InterruptedActivation,
          lock: T.HostLock,
          engine: T.LayoutEngine,
          config: T.Config,
          state: T.SessionState,
          versions: T.AgentVersionReport,
        }),
      ),
  );
  bind(T.AgentVersionReport).toDynamicValue(
    (c) =>
      new AgentVersionReport({
        ...resolveAll(c, {
          fs: T.FileSystem,
          runner: T.ProcessRunner,
          clock: T.Clock,
          engine: T.LayoutEngine,
          states: T.StateStore,
          config: T.Config,
          store: T.OperationStore,
        }),
        logger: c.get(T.Logger).child({ component: 'agent-version' }),
      }),
  );
}
