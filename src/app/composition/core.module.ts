import { ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import type { HostArchitecture } from '../../domain/archive-rules.js';
import { failure } from '../../domain/failure.js';
import type { SlotLayout } from '../../domain/slot-layout.js';
import type { Clock } from '../../ports/clock.js';
import type { ContainerRootfs } from '../../ports/container-rootfs.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { HostLock } from '../../ports/host-lock.js';
import type { Logger } from '../../ports/logger.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { ServiceManager } from '../../ports/service-manager.js';
import { Activation, type ActivationDependencies } from '../activation/activation.js';
import { InterruptedActivation } from '../activation/interrupted-activation.js';
import { probeVersion } from '../artifact/check-candidate.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise } from '../failure-signal.js';
import type { HostIdentity } from '../host-identity.js';
import { LayoutEngine } from '../layout/layout-engine.js';
import { HostEffects } from '../managed/host-effects.js';
import type { RecoverDependencies } from '../managed/recover.js';
import { MarkerStore } from '../record/marker-store.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import type { StatusDependencies } from '../status/read-status.js';
import { Tokens as T } from '../tokens.js';

/**
 * The use cases and what they share, bound once for every platform: a production process and a
 * simulated one differ only in the ports their platform module binds. Bindings name their
 * dependencies by token (no decorator metadata); each is a singleton of its container.
 */
export const coreModule = new ContainerModule(({ bind }) => {
  bindShared(bind);
  bindStores(bind);
  bindEffects(bind);
  bindUseCases(bind);
});

/** The record, the upgrade state and the activation marker: one store per file of the layout. */
function bindStores(bind: ContainerModuleLoadOptions['bind']): void {
  bind(T.RecordStore).toResolvedValue(
    (fs: FileSystem, layout: SlotLayout) => new RecordStore(fs, layout.record),
    [T.FileSystem, T.Layout],
  );
  bind(T.StateStore).toResolvedValue(
    (fs: FileSystem, layout: SlotLayout) => new StateStore(fs, layout.state),
    [T.FileSystem, T.Layout],
  );
  bind(T.MarkerStore).toResolvedValue(
    (fs: FileSystem, layout: SlotLayout) => new MarkerStore(fs, layout.activation),
    [T.FileSystem, T.Layout],
  );
}

/** The architecture and the layout engine every use case works through. */
function bindShared(bind: ContainerModuleLoadOptions['bind']): void {
  // Resolving anything that needs the architecture refuses an unsupported host with a code.
  bind(T.Architecture).toResolvedValue(
    (identity: HostIdentity): HostArchitecture =>
      identity.arch ?? raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only')),
    [T.HostIdentity],
  );
  bind(T.LayoutEngine).toResolvedValue(
    (
      fs: FileSystem,
      services: ServiceManager,
      logger: Logger,
      layout: SlotLayout,
      config: UpgraderConfig,
      identity: HostIdentity,
      runner: ProcessRunner,
      clock: Clock,
    ) =>
      new LayoutEngine(fs, services, logger.child({ component: 'layout' }), {
        layout,
        binaryMaxBytes: config.artifact.maxBinaryBytes,
        euid: identity.euid,
        probeVersion: (path) => probeVersion({ fs, runner, clock }, path),
      }),
    [T.FileSystem, T.ServiceManager, T.Logger, T.Layout, T.Config, T.HostIdentity, T.ProcessRunner, T.Clock],
  );
}

/** What the direct and the managed path both change the host with. */
function bindEffects(bind: ContainerModuleLoadOptions['bind']): void {
  bind(T.HostEffects).toResolvedValue(
    (
      fs: FileSystem,
      services: ServiceManager,
      container: ContainerRootfs,
      engine: LayoutEngine,
      config: UpgraderConfig,
    ) => new HostEffects({ fs, services, container, engine, config }),
    [T.FileSystem, T.ServiceManager, T.ContainerRootfs, T.LayoutEngine, T.Config],
  );
  bind(T.InterruptedActivation).toResolvedValue(
    (
      fs: FileSystem,
      services: ServiceManager,
      container: ContainerRootfs,
      engine: LayoutEngine,
      config: UpgraderConfig,
      logger: Logger,
      markers: MarkerStore,
      states: StateStore,
    ) => new InterruptedActivation({ fs, services, container, engine, config, logger, markers, states }),
    [
      T.FileSystem,
      T.ServiceManager,
      T.ContainerRootfs,
      T.LayoutEngine,
      T.Config,
      T.Logger,
      T.MarkerStore,
      T.StateStore,
    ],
  );
}

/** The use cases of the Upgrader and their dependencies. */
function bindUseCases(bind: ContainerModuleLoadOptions['bind']): void {
  bind(T.ActivationDependencies).toResolvedValue(
    (
      fs: FileSystem,
      services: ServiceManager,
      container: ContainerRootfs,
      runner: ProcessRunner,
      clock: Clock,
      logger: Logger,
      engine: LayoutEngine,
      config: UpgraderConfig,
      arch: HostArchitecture,
    ): ActivationDependencies => ({ fs, services, container, runner, clock, logger, engine, config, arch }),
    [
      T.FileSystem,
      T.ServiceManager,
      T.ContainerRootfs,
      T.ProcessRunner,
      T.Clock,
      T.Logger,
      T.LayoutEngine,
      T.Config,
      T.Architecture,
    ],
  );
  bind(T.Activation).toResolvedValue(
    (deps: ActivationDependencies) => new Activation(deps),
    [T.ActivationDependencies],
  );
  bind(T.RecoverDependencies).toResolvedValue(
    (
      lock: HostLock,
      records: RecordStore,
      effects: HostEffects,
      services: ServiceManager,
      clock: Clock,
      logger: Logger,
      config: UpgraderConfig,
      interrupted: InterruptedActivation,
    ): RecoverDependencies => ({ lock, records, effects, services, clock, logger, config, interrupted }),
    [T.HostLock, T.RecordStore, T.HostEffects, T.ServiceManager, T.Clock, T.Logger, T.Config, T.InterruptedActivation],
  );
  bind(T.StatusDependencies).toResolvedValue(
    (
      fs: FileSystem,
      services: ServiceManager,
      lock: HostLock,
      layout: SlotLayout,
      records: RecordStore,
      states: StateStore,
      config: UpgraderConfig,
    ): StatusDependencies => ({
      fs,
      services,
      lock,
      layout,
      records,
      states,
      binaryMaxBytes: config.artifact.maxBinaryBytes,
    }),
    [T.FileSystem, T.ServiceManager, T.HostLock, T.Layout, T.RecordStore, T.StateStore, T.Config],
  );
}
