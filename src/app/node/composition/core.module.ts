import { ContainerModule } from 'inversify';
import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import { failure } from '../../../domain/common/failure.js';
import { Activation, type ActivationDependencies } from '../activation/activation.js';
import { InterruptedActivation } from '../activation/interrupted-activation.js';
import { SlotEffects } from '../activation/slot-effects.js';
import { probeVersion } from '../artifact/check-candidate.js';
import { raise } from '../../common/failure-signal.js';
import { HealthGate, probeUnderRoot } from '../health/health-gate.js';
import { LayoutEngine } from '../layout/layout-engine.js';
import { HostEffects } from '../managed/host-effects.js';
import { WatchEffects } from '../health/watch-effects.js';
import type { RecoverDependencies } from '../managed/recover.js';
import { MarkerStore } from '../record/marker-store.js';
import { WatchStore } from '../record/watch-store.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import type { StatusDependencies } from '../status/read-status.js';
import { Tokens as T } from '../tokens.js';
import { bindBuilt, type Bind } from '../../common/composition/bind-built.js';

/**
 * The use cases and what they share, bound once for every platform: a production process and a
 * simulated one differ only in the ports their platform module binds. Every binding names its
 * dependencies by token (bindBuilt; no decorator metadata).
 */
export const coreModule = new ContainerModule(({ bind }) => {
  bindShared(bind);
  bindEffects(bind);
  bindUseCases(bind);
});

/** The architecture, the layout engine and one store per file of the layout. */
function bindShared(bind: Bind): void {
  // Resolving anything that needs the architecture refuses an unsupported host with a code.
  bindBuilt(
    bind,
    T.Architecture,
    { identity: T.HostIdentity },
    ({ identity }): HostArchitecture =>
      identity.arch ?? raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only')),
  );
  const files = { fs: T.FileSystem, layout: T.Layout };
  bindBuilt(bind, T.RecordStore, files, ({ fs, layout }) => new RecordStore(fs, layout.record));
  bindBuilt(bind, T.StateStore, files, ({ fs, layout }) => new StateStore(fs, layout.state));
  bindBuilt(bind, T.MarkerStore, files, ({ fs, layout }) => new MarkerStore(fs, layout.activation));
  bindBuilt(bind, T.WatchStore, files, ({ fs, layout }) => new WatchStore(fs, layout.watch));
  const engineDependencies = {
    ...files,
    runner: T.ProcessRunner,
    clock: T.Clock,
    config: T.Config,
    identity: T.HostIdentity,
    services: T.ServiceManager,
    logger: T.Logger,
    states: T.StateStore,
  };
  bindBuilt(bind, T.LayoutEngine, engineDependencies, ({ fs, runner, clock, config, identity, ...rest }) => {
    return new LayoutEngine(fs, rest.services, rest.logger.child({ component: 'layout' }), {
      layout: rest.layout,
      binaryMaxBytes: config.artifact.maxBinaryBytes,
      euid: identity.euid,
      states: rest.states,
      probeVersion: (path) => probeVersion({ fs, runner, clock }, path),
    });
  });
}

/** What the direct and the managed path both change the host with, and judge its health by. */
function bindEffects(bind: Bind): void {
  const gate = { services: T.ServiceManager, probe: T.HealthProbe, clock: T.Clock, logger: T.Logger, config: T.Config };
  bindBuilt(bind, T.HealthGate, { ...gate, layout: T.Layout }, ({ config, layout, logger, ...rest }) => {
    const { probe, ...limits } = config.health;
    return new HealthGate({
      ...rest,
      logger: logger.child({ component: 'health' }),
      health: probe === undefined ? limits : { ...limits, probe: probeUnderRoot(probe, layout.root) },
    });
  });
  const slotPorts = {
    services: T.ServiceManager,
    container: T.ContainerRootfs,
    engine: T.LayoutEngine,
    config: T.Config,
  };
  bindBuilt(bind, T.HostEffects, { ...slotPorts, fs: T.FileSystem }, (dependencies) => new HostEffects(dependencies));
  const window = {
    ...gate,
    effects: T.HostEffects,
    watches: T.WatchStore,
    health: T.HealthGate,
  };
  // The direct path watches the agent the service manager runs, whoever runs `activate`.
  bindBuilt(bind, T.DirectWatch, window, ({ config, health, logger, ...rest }) => {
    const owner = 'direct';
    return new WatchEffects({ ...rest, gate: health, logger, mode: 'sidecar', owner, pollMs: config.health.pollMs });
  });
  const effects = { ...slotPorts, gate: T.HealthGate, window: T.DirectWatch };
  bindBuilt(bind, T.SlotEffects, effects, (dependencies) => new SlotEffects(dependencies));
  const interruptedPorts = {
    ...slotPorts,
    fs: T.FileSystem,
    logger: T.Logger,
    markers: T.MarkerStore,
    states: T.StateStore,
    effects: T.SlotEffects,
    window: T.DirectWatch,
  };
  bindBuilt(bind, T.InterruptedActivation, interruptedPorts, (dependencies) => new InterruptedActivation(dependencies));
}

/** The use cases of the Upgrader and their dependency records. */
function bindUseCases(bind: Bind): void {
  const activation = {
    fs: T.FileSystem,
    services: T.ServiceManager,
    container: T.ContainerRootfs,
    runner: T.ProcessRunner,
    clock: T.Clock,
    logger: T.Logger,
    engine: T.LayoutEngine,
    config: T.Config,
    arch: T.Architecture,
    records: T.RecordStore,
    states: T.StateStore,
    markers: T.MarkerStore,
    effects: T.SlotEffects,
    interrupted: T.InterruptedActivation,
    trust: T.ReleaseTrust,
  };
  bindBuilt(bind, T.ActivationDependencies, activation, (dependencies): ActivationDependencies => dependencies);
  bindBuilt(
    bind,
    T.Activation,
    { dependencies: T.ActivationDependencies },
    ({ dependencies }) => new Activation(dependencies),
  );
  const recover = {
    lock: T.HostLock,
    records: T.RecordStore,
    effects: T.HostEffects,
    services: T.ServiceManager,
    clock: T.Clock,
    logger: T.Logger,
    config: T.Config,
    interrupted: T.InterruptedActivation,
  };
  bindBuilt(bind, T.RecoverDependencies, recover, (dependencies): RecoverDependencies => dependencies);
  const status = {
    fs: T.FileSystem,
    services: T.ServiceManager,
    lock: T.HostLock,
    layout: T.Layout,
    records: T.RecordStore,
    watches: T.WatchStore,
    states: T.StateStore,
    clock: T.Clock,
    config: T.Config,
    trust: T.ReleaseTrust,
  };
  bindBuilt(bind, T.StatusDependencies, status, ({ config, ...dependencies }): StatusDependencies => ({
    ...dependencies,
    binaryMaxBytes: config.artifact.maxBinaryBytes,
    trustSettings: config.trust,
  }));
}
