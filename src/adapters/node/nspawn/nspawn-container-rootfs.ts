import { ContainerError } from '../../../domain/common/port-errors.js';
import { isCleanAbsolutePath } from '../../../domain/node/layout/posix-path.js';
import { isMachineName } from '../../../domain/node/record/upgrade-record.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileDigest } from '../../../ports/node/file-system.js';
import { translated } from './container-error-translation.js';
import { readActiveMachine } from './daemon-state.js';
import {
  checkReplaceableTarget,
  hashBounded,
  openRegularFileAt,
  openRegularSource,
  replaceFileIn,
  sweepTemps,
  tooLargeError,
} from './rootfs-file.js';
import { openBinaryDirectory, type RootfsWalk } from './rootfs-walk.js';

export interface NspawnContainerRootfsOptions {
  /** The daemon's state file naming the active machine, e.g. /etc/aks-flex-node/daemon-state.json. */
  readonly daemonStatePath: string;
  /** Where machine rootfs directories live, e.g. /var/lib/machines. */
  readonly machinesDir: string;
  /** The machines the daemon may run, e.g. kube1 and kube2; no other name is ever touched. */
  readonly machines: readonly string[];
  /** The agent's path inside a rootfs, e.g. /usr/local/bin/aks-flex-node. */
  readonly binaryPath: string;
  /** The largest copy accepted (`artifact.maxBinaryBytes`, 256 MiB by default). */
  readonly maxBytes: number;
}

/** The copy keeps the mode of the host's slot binaries. */
const BINARY_MODE = 0o755;

/**
 * The nspawn copy (docs/operations.md#container-platform-nspawn) on a real host: the agent binary
 * inside the active machine's rootfs at <machinesDir>/<machine><binaryPath>. A rootfs is
 * controlled by the container, so nothing below the machines directory is ever followed through a
 * symlink: each directory is opened with O_NOFOLLOW relative to its parent's descriptor
 * (rootfs-walk.ts), and the copy is made through the final directory's descriptor
 * (rootfs-file.ts). Linux only (/proc/self/fd).
 */
export class NspawnContainerRootfs implements ContainerRootfs {
  private readonly below: readonly string[];
  private readonly binaryName: string;

  constructor(private readonly options: NspawnContainerRootfsOptions) {
    if (!isCleanAbsolutePath(options.machinesDir)) throw new TypeError('machinesDir must be a clean absolute path');
    if (!isCleanAbsolutePath(options.daemonStatePath))
      throw new TypeError('daemonStatePath must be a clean absolute path');
    if (!isCleanAbsolutePath(options.binaryPath) || options.binaryPath === '/')
      throw new TypeError('binaryPath must name a file');
    if (!options.machines.every(isMachineName))
      throw new TypeError('every configured machine must be a valid machine name');
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0)
      throw new TypeError('maxBytes must be a non-negative integer');
    const names = options.binaryPath.split('/').filter((name) => name !== '');
    const binaryName = names.pop();
    if (binaryName === undefined) throw new TypeError('binaryPath must name a file');
    this.below = names;
    this.binaryName = binaryName;
  }

  async activeMachine(): Promise<string | null> {
    return await translated('reading the daemon state file', () =>
      readActiveMachine(this.options.daemonStatePath, this.options.machines),
    );
  }

  async install(machine: string, sourcePath: string): Promise<FileDigest> {
    const walk = this.walkFor(machine);
    return await translated(`copying the agent into ${machine}`, async () => {
      const source = await openRegularSource(sourcePath);
      try {
        // Refuse up front when the size already tells, so not even a directory is created.
        if (source.size > this.options.maxBytes) throw tooLargeError(this.options.maxBytes);
        const directory = await openBinaryDirectory(walk, true);
        try {
          await checkReplaceableTarget(directory, this.binaryName, machine);
          await sweepTemps(directory, this.binaryName);
          return await replaceFileIn(directory, this.binaryName, source.handle, {
            mode: BINARY_MODE,
            maxBytes: this.options.maxBytes,
          });
        } finally {
          await directory.close();
        }
      } finally {
        await source.handle.close();
      }
    });
  }

  async digest(machine: string): Promise<FileDigest | null> {
    const walk = this.walkFor(machine);
    return await translated(`hashing the agent in ${machine}`, async () => {
      const directory = await openBinaryDirectory(walk, false);
      if (directory === null) return null;
      try {
        const file = await openRegularFileAt(directory, this.binaryName, machine);
        if (file === null) return null;
        try {
          if ((await file.stat()).size > this.options.maxBytes) throw tooLargeError(this.options.maxBytes);
          return await hashBounded(file, this.options.maxBytes);
        } finally {
          await file.close();
        }
      } finally {
        await directory.close();
      }
    });
  }

  /** Checked before any disk access: the name becomes a path component under machinesDir. */
  private walkFor(machine: string): RootfsWalk {
    if (!isMachineName(machine))
      throw new ContainerError('invalid-machine', 'the machine name is not a safe path component');
    if (!this.options.machines.includes(machine)) {
      throw new ContainerError(
        'invalid-machine',
        `machine "${machine}" is not one of the configured machines (${this.options.machines.join(', ')})`,
      );
    }
    return { machinesDir: this.options.machinesDir, machine, below: this.below };
  }
}
