import { Container, ContainerModule } from 'inversify';
import { NoContainerRootfs } from '../../adapters/none/no-container-rootfs.js';
import { NspawnContainerRootfs } from '../../adapters/nspawn/nspawn-container-rootfs.js';
import { rerootPath } from '../../domain/posix-path.js';
import type { SlotLayout } from '../../domain/slot-layout.js';
import type { Logger } from '../../ports/logger.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import { Tokens } from '../tokens.js';
import { clusterPlatformModule } from './cluster-platform.module.js';
import { coreModule } from './core.module.js';
import { hostModule } from './host.module.js';
import { noneServiceModule, supervisorServiceModule, systemdServiceModule } from './service-platform.module.js';
import type { PortOverrides } from './port-overrides.js';

export interface ContainerInput {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly overrides: PortOverrides;
}

/**
 * The composition root: core services, the host adapters, exactly one service platform chosen
 * by `service.manager` and one container platform chosen by `container.manager`. Nothing
 * outside src/app/composition touches the container.
 */
export function createContainer(input: ContainerInput): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.load(
    new ContainerModule(({ bind }) => {
      bind(Tokens.Config).toConstantValue(input.config);
      bind(Tokens.Layout).toConstantValue(input.layout);
      bind(Tokens.HostIdentity).toConstantValue(input.identity);
      bind(Tokens.Logger).toConstantValue(input.logger);
    }),
    hostModule(input.overrides),
    servicePlatformModule(input),
    containerPlatformModule(input),
    clusterPlatformModule(input.overrides.operationStore),
    coreModule,
  );
  return container;
}

function servicePlatformModule(input: ContainerInput): ContainerModule {
  const override = input.overrides.serviceManager;
  if (override !== undefined) {
    return new ContainerModule(({ bind }) => void bind(Tokens.ServiceManager).toConstantValue(override));
  }
  switch (input.config.service.manager) {
    case 'none':
      return noneServiceModule;
    case 'systemd':
      return systemdServiceModule;
    case 'supervisor':
      return supervisorServiceModule;
  }
}

function containerPlatformModule(input: ContainerInput): ContainerModule {
  const container =
    input.overrides.containerRootfs ??
    (input.config.container.manager === 'none' ? new NoContainerRootfs() : nspawnRootfs(input));
  return new ContainerModule(({ bind }) => void bind(Tokens.ContainerRootfs).toConstantValue(container));
}

/** `container.manager: "nspawn"`: the copy inside the active machine (read from the daemon state). */
function nspawnRootfs({ config, layout }: ContainerInput): NspawnContainerRootfs {
  return new NspawnContainerRootfs({
    daemonStatePath: layout.daemonState,
    machinesDir: rerootPath(config.root, config.container.machinesDir),
    machines: config.container.machines,
    binaryPath: config.container.binaryPath,
    maxBytes: config.artifact.maxBinaryBytes,
  });
}
