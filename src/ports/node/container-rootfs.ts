import type { FileDigest } from './file-system.js';

/**
 * The copy of the agent inside the active nspawn machine's rootfs. Implementations never follow
 * a symlink inside the container rootfs. Failures are thrown as `ContainerError`.
 */
export interface ContainerRootfs {
  /** The active machine, or `null` when the host has none (a reset host). */
  activeMachine(): Promise<string | null>;
  /** Copies `sourcePath` into `machine`'s rootfs atomically and returns what was written. */
  install(machine: string, sourcePath: string): Promise<FileDigest>;
  /** The digest of the copy inside `machine`, or `null` when it is absent. */
  digest(machine: string): Promise<FileDigest | null>;
}
