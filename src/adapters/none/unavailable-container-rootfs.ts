import { ContainerError } from '../../domain/port-errors.js';
import type { ContainerRootfs } from '../../ports/container-rootfs.js';
import type { FileDigest } from '../../ports/file-system.js';

/**
 * Stands in for the nspawn platform until this build can drive it: every call fails, so an
 * activation that would have to keep a container copy in step stops instead of skipping it.
 */
export class UnavailableContainerRootfs implements ContainerRootfs {
  activeMachine(): Promise<string | null> {
    return this.refuse();
  }

  install(): Promise<FileDigest> {
    return this.refuse();
  }

  digest(): Promise<FileDigest | null> {
    return this.refuse();
  }

  private refuse(): Promise<never> {
    return Promise.reject(
      new ContainerError('not-supported', 'the nspawn container platform is not available in this build; set container.manager to "none" or supply a ContainerRootfs through the library API'),
    );
  }
}
