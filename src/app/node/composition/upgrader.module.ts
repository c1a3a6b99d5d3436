import { ContainerModule } from 'inversify';
import { Upgrader } from '../upgrader.js';
import { Tokens as T } from '../tokens.js';

/**
 * The Upgrader over the process's objects. The use cases that need a supported architecture
 * resolve on first use, so `status` and `recover` still work on a host releases are not built for.
 * That laziness is why this one binding reads the container itself instead of using bindBuilt:
 * resolving `Activation` here would refuse every command on such a host.
 */
export const upgraderModule = new ContainerModule(({ bind }) => {
  bind(T.Upgrader).toDynamicValue(
    (context) =>
      new Upgrader({
        config: context.get(T.Config),
        layout: context.get(T.Layout),
        identity: context.get(T.HostIdentity),
        logger: context.get(T.Logger),
        fs: context.get(T.FileSystem),
        lock: context.get(T.HostLock),
        services: context.get(T.ServiceManager),
        engine: context.get(T.LayoutEngine),
        source: context.get(T.ArtifactSource),
        extractor: context.get(T.ArchiveExtractor),
        trust: context.get(T.ReleaseTrust),
        clock: context.get(T.Clock),
        openOperationStore: context.get(T.OperationStoreFactory),
        recoverDependencies: context.get(T.RecoverDependencies),
        statusDependencies: context.get(T.StatusDependencies),
        activation: () => context.get(T.Activation),
        activationDependencies: () => context.get(T.ActivationDependencies),
        sessions: () => context.get(T.ManagedSessionFactory),
      }),
  );
});
