import { Container, ContainerModule } from 'inversify';
import type { SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import type { SessionOptions } from '../managed/session-options.js';
import { Tokens } from '../tokens.js';
import { kubernetesClusterModule, noClusterModule } from './cluster-platform.module.js';
import { noContainerModule, nspawnContainerModule } from './container-platform.module.js';
import { coreModule } from './core.module.js';
import { hostModule } from './host.module.js';
import { overridesModule, portsModule, type PlatformPorts, type PortOverrides } from './port-overrides.js';
import { noneServiceModule, supervisorServiceModule, systemdServiceModule } from './service-platform.module.js';
import { sessionModule } from './session.module.js';
import { upgraderModule } from './upgrader.module.js';

/** The modules that bind every port of a process. */
export interface Platform {
  readonly name: string;
  readonly modules: readonly ContainerModule[];
}

export interface ContainerInput {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  /** Default: the real host with the platforms `config` names. */
  readonly platform?: Platform | undefined;
  readonly overrides: PortOverrides;
}

/**
 * The composition root: what the caller supplies, one platform's ports, the core use cases, and
 * the overrides loaded last. Nothing outside src/app/composition touches the container.
 */
export function createContainer(input: ContainerInput): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  const platform = input.platform ?? hostPlatform(input.config);
  container.load(
    new ContainerModule(({ bind }) => {
      bind(Tokens.Config).toConstantValue(input.config);
      bind(Tokens.Layout).toConstantValue(input.layout);
      bind(Tokens.HostIdentity).toConstantValue(input.identity);
      bind(Tokens.Logger).toConstantValue(input.logger);
      // A daemon session is a child container: its store and instance, the parent's process.
      bind(Tokens.ManagedSessionFactory).toConstantValue((options: SessionOptions) =>
        sessionContainer(container, options).get(Tokens.ManagedSession),
      );
    }),
    ...platform.modules,
    coreModule,
    upgraderModule,
    overridesModule(input.overrides),
  );
  return container;
}

/** One daemon session's objects, over the process's container. */
export function sessionContainer(parent: Container, options: SessionOptions): Container {
  const child = new Container({ parent, defaultScope: 'Singleton' });
  child.load(sessionModule(options));
  return child;
}

/** The real host, with the service, container and cluster platforms the configuration names. */
export function hostPlatform(config: UpgraderConfig): Platform {
  const service = { none: noneServiceModule, systemd: systemdServiceModule, supervisor: supervisorServiceModule }[
    config.service.manager
  ];
  const container = config.container.manager === 'none' ? noContainerModule : nspawnContainerModule;
  const cluster = config.cluster.manager === 'none' ? noClusterModule : kubernetesClusterModule;
  return {
    name: `host/${config.service.manager}/${config.container.manager}/${config.cluster.manager}`,
    modules: [hostModule, service, container, cluster],
  };
}

/** A platform of port instances: the memory adapters of a simulated host, or an embedder's own. */
export function memoryPlatform(ports: PlatformPorts): Platform {
  return { name: 'memory', modules: [portsModule(ports)] };
}
