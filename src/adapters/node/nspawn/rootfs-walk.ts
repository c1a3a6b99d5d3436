import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { ContainerError } from '../../../domain/common/port-errors.js';
import { errnoCode } from '../host/file-system-shared.js';
import { DIRECTORY_FLAGS, procPath } from './proc-fd.js';

/** Directories we create inside a rootfs get the conventional mode of /usr/local/bin and its parents. */
export const CREATED_DIRECTORY_MODE = 0o755;

export interface RootfsWalk {
  /** Where machine rootfs directories live; a host path from configuration, so links in it are followed. */
  readonly machinesDir: string;
  /** A validated machine name: one path component. */
  readonly machine: string;
  /** The directory names from the rootfs root down to the binary's directory, e.g. usr, local, bin. */
  readonly below: readonly string[];
}

/**
 * Opens the binary's directory inside a machine's rootfs, one component at a time, each opened
 * with O_NOFOLLOW relative to the descriptor of its parent (openat emulated through
 * /proc/self/fd). The machine directory and everything below it are container-controlled: a
 * symlink there (say usr/local/bin → /usr/local/bin) is refused rather than followed, and since
 * each step starts from an already-opened descriptor, swapping a checked component for a link
 * afterwards cannot redirect us either.
 *
 * With `create`, missing directories below the machine directory are made (0755); the machine
 * directory itself is never created (an absent one means there is no such machine). Without
 * `create`, anything missing means there is no copy: `null`. The caller closes the returned
 * handle.
 */
export async function openBinaryDirectory(walk: RootfsWalk, create: true): Promise<FileHandle>;
export async function openBinaryDirectory(walk: RootfsWalk, create: false): Promise<FileHandle | null>;
export async function openBinaryDirectory(walk: RootfsWalk, create: boolean): Promise<FileHandle | null> {
  let current: FileHandle | null;
  try {
    current = await open(walk.machinesDir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    if (!create && errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    const names = [walk.machine, ...walk.below];
    for (const [index, name] of names.entries()) {
      // The machine directory (index 0) is never created; the ones below it may be.
      const next: FileHandle | null = await openChildDirectory(current, name, create && index > 0, walk.machine);
      const parent: FileHandle = current;
      current = next; // from here on the catch below closes the child, not the parent
      await parent.close();
      if (current === null) {
        // Only the machine directory is absent in create mode: the machine itself does not exist.
        if (create) throw new ContainerError('io', `the rootfs of ${walk.machine} does not exist (ENOENT)`);
        return null;
      }
    }
    return current;
  } catch (error) {
    await current?.close().catch(() => undefined);
    throw error;
  }
}

/** The entry `name` in `directory` without following it; `null` when absent. */
export async function lstatAt(directory: FileHandle, name: string): Promise<Stats | null> {
  try {
    return await lstat(procPath(directory, name));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/** Refused entries are classified for the caller; the refusal itself came from the kernel. */
export function refusedEntryError(
  stats: Stats | null,
  machine: string,
  name: string,
  expected: string,
): ContainerError {
  if (stats?.isSymbolicLink())
    return new ContainerError(
      'symlink-refused',
      `the rootfs of ${machine} has a symlink at "${name}"; it is never followed`,
    );
  return new ContainerError('io', `the rootfs of ${machine} has something other than ${expected} at "${name}"`);
}

async function openChildDirectory(
  parent: FileHandle,
  name: string,
  create: boolean,
  machine: string,
): Promise<FileHandle | null> {
  const path = procPath(parent, name);
  try {
    return await open(path, DIRECTORY_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return create ? await createChildDirectory(parent, name, machine) : null;
    // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR or ELOOP; so does a plain file.
    // Which one it was only shapes the error: nothing was followed either way.
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw refusedEntryError(await lstatAt(parent, name), machine, name, 'a directory');
    throw error;
  }
}

async function createChildDirectory(parent: FileHandle, name: string, machine: string): Promise<FileHandle> {
  let created = true;
  try {
    // mkdir never follows a final symlink: a link planted meanwhile (even a dangling one) is EEXIST.
    await mkdir(procPath(parent, name), { mode: CREATED_DIRECTORY_MODE });
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
    created = false; // a racing creator; the open below still refuses anything but a real directory
  }
  let child: FileHandle;
  try {
    child = await open(procPath(parent, name), DIRECTORY_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw refusedEntryError(await lstatAt(parent, name), machine, name, 'a directory');
    throw error;
  }
  try {
    if (created) {
      // mkdir applied the umask; set the exact mode on the descriptor we hold (fchmod, no path).
      await child.chmod(CREATED_DIRECTORY_MODE);
      // The new entry must survive a crash before the binary inside it does.
      await parent.sync();
    }
    return child;
  } catch (error) {
    await child.close().catch(() => undefined);
    throw error;
  }
}
