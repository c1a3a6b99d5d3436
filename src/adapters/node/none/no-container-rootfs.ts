import { ContainerError } from '../../../domain/common/port-errors.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileDigest } from '../../../ports/node/file-system.js';

/** `container.manager: "none"`: the host runs no nspawn machine, so there is no copy to keep. */
export class NoContainerRootfs implements ContainerRootfs {
  async activeMachine(): Promise<string | null> {
    return null;
  }

  async install(machine: string): Promise<FileDigest> {
    // Unreachable through the app (activeMachine is always null); a typed failure all the same.
    throw new ContainerError('not-supported', `no container platform is configured; cannot install into ${machine}`);
  }

  async digest(): Promise<FileDigest | null> {
    return null;
  }
}
