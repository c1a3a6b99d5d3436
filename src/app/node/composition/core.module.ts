import { ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import { failure } from '../../../domain/common/failure.js';
import { Activation, type ActivationDependencies } from '../activation/activation.js';
import { InterruptedActivation } from '../activation/interrupted-activation.js';
import { SlotEffects } from '../activation/slot-effects.js';
import { probeVersion } from '../artifact/check-candidate.js';
import { raise } from '../../common/failure-signal.js';
import type { HostIdentity } from '../host-identity.js';
import { LayoutEngine } from '../layout/layout-engine.js';
import { HostEffects } from '../managed/host-effects.js';
import type { RecoverDependencies } from '../managed/recover.js';
import { MarkerStore } from '../record/marker-store.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import type { StatusDependencies } from '../status/read-status.js';
import { Tokens as T } from '../tokens.js';
import { resolveAll } from './resolve-all.js';

type Bind = ContainerModuleLoadOptions['bind'];

/**
 * The use cases and what they share, bound once for every platform: a production process and a
 * simulated one differ only in the ports their platform module binds. Every binding names its
 * dependencies by token (no decorator metadata); each is a singleton of its container.
 */
export const coreModule = new ContainerModule(({ bind }) => {
  bindShared(bind);
  bindEffects(bind);
  bindUseCases(bind);
});

/** The architecture, the layout engine and one store per file of the layout. */
function bindShared(bind: Bind): void {
  // Resolving anything that needs the architecture refuses an unsupported host with a code.
  bind(T.Architecture).toResolvedValue(
    (identity: HostIdentity): HostArchitecture =>
      identity.arch ?? raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only')),
    [T.HostIdentity],
  );
  bind(T.RecordStore).toDynamicValue((c) => new RecordStore(c.get(T.FileSystem), c.get(T.Layout).record));
  bind(T.StateStore).toDynamicValue((c) => new StateStore(c.get(T.FileSystem), c.get(T.Layout).state));
  bind(T.MarkerStore).toDynamicValue((c) => new MarkerStore(c.get(T.FileSystem), c.get(T.Layout).activation));
  bind(T.LayoutEngine).toDynamicValue((c) => {
    const { fs, runner, clock, config, identity } = resolveAll(c, {
      fs: T.FileSystem,
      runner: T.ProcessRunner,
      clock: T.Clock,
      config: T.Config,
      identity: T.HostIdentity,
    });
    return new LayoutEngine(fs, c.get(T.ServiceManager), c.get(T.Logger).child({ component: 'layout' }), {
      layout: c.get(T.Layout),
      binaryMaxBytes: config.artifact.maxBinaryBytes,
      euid: identity.euid,
      states: c.get(T.StateStore),
      probeVersion: (path) => probeVersion({ fs, runner, clock }, path),
    });
  });
}

/** What the direct and the managed path both change the host with. */
function bindEffects(bind: Bind): void {
  const slotPorts = {
    services: T.ServiceManager,
    container: T.ContainerRootfs,
    engine: T.LayoutEngine,
    config: T.Config,
  };
  bind(T.SlotEffects).toDynamicValue((c) => new SlotEffects(resolveAll(c, slotPorts)));
  bind(T.HostEffects).toDynamicValue((c) => new HostEffects(resolveAll(c, { ...slotPorts, fs: T.FileSystem })));
  bind(T.InterruptedActivation).toDynamicValue(
    (c) =>
      new InterruptedActivation(
        resolveAll(c, {
          ...slotPorts,
          fs: T.FileSystem,
          logger: T.Logger,
          markers: T.MarkerStore,
          states: T.StateStore,
          effects: T.SlotEffects,
        }),
      ),
  );
}

/** The use cases of the Upgrader and their dependency records. */
function bindUseCases(bind: Bind): void {
  bind(T.ActivationDependencies).toDynamicValue((c): ActivationDependencies =>
    resolveAll(c, {
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
    }),
  );
  bind(T.Activation).toDynamicValue((c) => new Activation(c.get(T.ActivationDependencies)));
  bind(T.RecoverDependencies).toDynamicValue((c): RecoverDependencies =>
    resolveAll(c, {
      lock: T.HostLock,
      records: T.RecordStore,
      effects: T.HostEffects,
      services: T.ServiceManager,
      clock: T.Clock,
      logger: T.Logger,
      config: T.Config,
      interrupted: T.InterruptedActivation,
    }),
  );
  bind(T.StatusDependencies).toDynamicValue((c): StatusDependencies => ({
    ...resolveAll(c, {
      fs: T.FileSystem,
      services: T.ServiceManager,
      lock: T.HostLock,
      layout: T.Layout,
      records: T.RecordStore,
      states: T.StateStore,
    }),
    binaryMaxBytes: c.get(T.Config).artifact.maxBinaryBytes,
  }));
}
