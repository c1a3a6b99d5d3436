import { ContainerModule } from 'inversify';
import { NoContainerRootfs } from '../../../adapters/node/none/no-container-rootfs.js';
import { NspawnContainerRootfs } from '../../../adapters/node/nspawn/nspawn-container-rootfs.js';
import { rerootPath } from '../../../domain/node/layout/posix-path.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import { Tokens } from '../tokens.js';

/** `container.manager: "none"`: no copy of the agent inside a container to keep in step. */
export const noContainerModule = new ContainerModule(({ bind }) => {
  bind(Tokens.ContainerRootfs).toConstantValue(new NoContainerRootfs());
});

/** `container.manager: "nspawn"`: the copy inside the active machine (read from the daemon state). */
export const nspawnContainerModule = new ContainerModule(({ bind }) => {
  bindBuilt(bind, Tokens.ContainerRootfs, { config: Tokens.Config, layout: Tokens.Layout }, ({ config, layout }) => {
    return new NspawnContainerRootfs({
      daemonStatePath: layout.daemonState,
      machinesDir: rerootPath(config.root, config.container.machinesDir),
      machines: config.container.machines,
      binaryPath: config.container.binaryPath,
      maxBytes: config.artifact.maxBinaryBytes,
    });
  });
});
