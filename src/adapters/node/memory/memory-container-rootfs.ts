import type { Sha256 } from '../../../domain/common/digest.js';
import { ContainerError, FileSystemError } from '../../../domain/common/port-errors.js';
import { basenamePath, dirnamePath, isCleanAbsolutePath, joinPath } from '../../../domain/node/layout/posix-path.js';
import { isMachineName } from '../../../domain/node/record/upgrade-record.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileDigest, FileSystem } from '../../../ports/node/file-system.js';

export interface MemoryContainerRootfsOptions {
  readonly fs: FileSystem;
  /** Where machine rootfs directories live, e.g. /var/lib/machines. */
  readonly machinesDir: string;
  /** The agent's path inside a rootfs, e.g. /usr/local/bin/aks-flex-node. */
  readonly binaryPath: string;
  readonly activeMachine: () => Promise<string | null> | string | null;
  readonly maxBytes: number;
}

export type ContainerMethod = 'install' | 'digest';

/**
 * The nspawn copy (docs/operations.md#container-platform-nspawn) over a FileSystem port, so
 * simulations see the same crash and fault model for the container copy as for the host binaries.
 * Like the real platform it never follows a symlink below the machine directory: a rootfs is
 * controlled by the container, and a planted link (e.g. usr/local/bin → /usr/local/bin) would
 * otherwise make us overwrite the host.
 */
export class MemoryContainerRootfs implements ContainerRootfs {
  private readonly failures = new Set<ContainerMethod>();
  readonly installs: { readonly machine: string; readonly sha256: Sha256 }[] = [];

  constructor(private readonly options: MemoryContainerRootfsOptions) {
    if (!isCleanAbsolutePath(options.machinesDir)) throw new TypeError('machinesDir must be a clean absolute path');
    if (!isCleanAbsolutePath(options.binaryPath) || options.binaryPath === '/')
      throw new TypeError('binaryPath must name a file');
  }

  /** Makes the next call of `method` fail with ContainerError 'io'. */
  failNext(method: ContainerMethod): void {
    this.failures.add(method);
  }

  async activeMachine(): Promise<string | null> {
    return await this.options.activeMachine();
  }

  async install(machine: string, sourcePath: string): Promise<FileDigest> {
    this.maybeFail('install');
    const path = await this.walk(machine, true);
    if (path === null) throw new ContainerError('io', `cannot prepare the binary's directory in ${machine}`);
    await this.sweepTemps(path);
    const digest = await translated(() =>
      this.options.fs.copyFileAtomic(sourcePath, path, { mode: 0o755, maxBytes: this.options.maxBytes }),
    );
    this.installs.push({ machine, sha256: digest.sha256 });
    return digest;
  }

  async digest(machine: string): Promise<FileDigest | null> {
    this.maybeFail('digest');
    const path = await this.walk(machine, false);
    if (path === null) return null;
    try {
      return await this.options.fs.hashFile(path, this.options.maxBytes);
    } catch (error) {
      // Gone between the walk and the read: absent, as the contract says.
      if (error instanceof FileSystemError && error.code === 'ENOENT') return null;
      throw asContainerError(error);
    }
  }

  /** Temps an interrupted copy left next to the binary (ours by name) go before the next copy. */
  private async sweepTemps(path: string): Promise<void> {
    const directory = dirnamePath(path);
    const prefix = `.${basenamePath(path)}.tmp-`;
    for (const name of (await translated(() => this.options.fs.listDirectory(directory))) ?? []) {
      if (name.startsWith(prefix)) await translated(() => this.options.fs.remove(joinPath(directory, name)));
    }
  }

  /**
   * lstat every component from the machine directory down to the binary. A symlink anywhere is
   * refused; a missing directory is created (install) or means "no copy" (digest → null).
   * Returns the binary's path, or null when it cannot exist yet.
   */
  private async walk(machine: string, create: boolean): Promise<string | null> {
    if (!isMachineName(machine))
      throw new ContainerError('invalid-machine', 'the machine name is not a safe path component');
    const root = joinPath(this.options.machinesDir, machine);
    const below = this.options.binaryPath.split('/').filter((name) => name !== '');
    const components = [root, ...below.map((_, index) => joinPath(root, ...below.slice(0, index + 1)))];
    const target = components[components.length - 1] ?? root;
    for (const path of components) {
      const stat = await translated(() => this.options.fs.lstat(path));
      if (stat?.kind === 'symlink')
        throw new ContainerError('symlink-refused', `a symlink inside the rootfs of ${machine} was refused`);
      if (path === target) {
        if (stat === null && !create) return null;
        if (stat !== null && stat.kind !== 'file')
          throw new ContainerError('io', `the binary's path in ${machine} is not a regular file`);
        continue;
      }
      if (stat === null) {
        if (!create) return null;
        await translated(() => this.options.fs.ensureDirectory(path, 0o755));
      } else if (stat.kind !== 'directory') {
        throw new ContainerError('io', `a component of the binary's path in ${machine} is not a directory`);
      }
    }
    return target;
  }

  private maybeFail(method: ContainerMethod): void {
    if (this.failures.delete(method)) throw new ContainerError('io', `${method} failed (injected)`);
  }
}

/** The port promises ContainerError only: file-system failures are mapped here, once. */
async function translated<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw asContainerError(error);
  }
}

function asContainerError(error: unknown): unknown {
  if (!(error instanceof FileSystemError)) return error; // programming errors and simulated crashes pass through
  if (error.code === 'ETOOBIG')
    return new ContainerError('too-large', 'the binary is larger than the container copy allows');
  if (error.code === 'ELOOP')
    return new ContainerError('symlink-refused', 'a symlink loop inside the rootfs was refused');
  return new ContainerError('io', `the container copy failed: ${error.code}`);
}
