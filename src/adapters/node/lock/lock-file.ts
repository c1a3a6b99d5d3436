import { constants } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { LockError } from '../../../domain/common/port-errors.js';

const { O_CREAT, O_DIRECTORY, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR } = constants;
const LOCK_DIRECTORY_MODE = 0o750;
const LOCK_FILE_MODE = 0o600;

/** The opened lock file and the identity of what was checked, so it is what gets locked. */
export interface LockFile {
  readonly handle: FileHandle;
  readonly device: bigint;
  readonly inode: bigint;
}

/**
 * Opens the lock file at `path` below `root` without following any symlink below the root and
 * without blocking: each directory is opened with O_DIRECTORY|O_NOFOLLOW relative to its parent's
 * descriptor (through /proc/self/fd, since Node has no openat), so a component swapped for a
 * symlink cannot redirect the walk. The root itself is the operator's choice and is followed.
 * Only a regular, singly linked file owned by this process's euid is accepted (root in
 * production): a FIFO would block the open, a device could act on open, and a symlink or a hard
 * link would let the holder note overwrite a file elsewhere. `create` makes missing directories
 * (0750) and the file (0600) and opens it read-write; otherwise a missing entry gives `null`.
 * Anything refused throws LockError "unavailable" ("permission" for EACCES and EPERM) before
 * anything was created or written.
 */
export async function openLockFile(root: string, path: string, create: boolean): Promise<LockFile | null> {
  const names = componentsBelow(root, path);
  let directory = await openRoot(root, path);
  try {
    for (const name of names.slice(0, -1)) {
      const next = await openChildDirectory(directory, name, create, path);
      if (next === null) return null;
      await directory.close();
      directory = next;
    }
    return await openChildFile(directory, names[names.length - 1] ?? '', create, path);
  } finally {
    await directory.close();
  }
}

function componentsBelow(root: string, path: string): string[] {
  const prefix = root.endsWith('/') ? root : `${root}/`;
  const names = path.startsWith(prefix) ? path.slice(prefix.length).split('/') : [];
  if (names.length === 0 || names.some((name) => name === '' || name === '.' || name === '..')) {
    throw refused(path, `it is not a clean path below ${root}`);
  }
  return names;
}

async function openRoot(root: string, path: string): Promise<FileHandle> {
  try {
    return await open(root, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    throw refused(path, `the root ${root} cannot be opened (${errnoOf(error)})`, error);
  }
}

async function openChildDirectory(
  parent: FileHandle,
  name: string,
  create: boolean,
  path: string,
): Promise<FileHandle | null> {
  const at = childPath(parent, name);
  const flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
  try {
    return await open(at, flags);
  } catch (error) {
    // ELOOP is a symlink, ENOTDIR anything else that is not a directory: refused either way.
    if (errnoOf(error) !== 'ENOENT') throw refused(path, `${name} is not a plain directory (${errnoOf(error)})`, error);
  }
  if (!create) return null;
  try {
    await mkdir(at, LOCK_DIRECTORY_MODE);
  } catch (error) {
    // Another process may have made it meanwhile; the no-follow open below judges what is there.
    if (errnoOf(error) !== 'EEXIST') throw refused(path, `${name} cannot be created (${errnoOf(error)})`, error);
  }
  try {
    return await open(at, flags);
  } catch (error) {
    throw refused(path, `${name} is not a plain directory (${errnoOf(error)})`, error);
  }
}

async function openChildFile(
  parent: FileHandle,
  name: string,
  create: boolean,
  path: string,
): Promise<LockFile | null> {
  const at = childPath(parent, name);
  // Looking first keeps a FIFO or a device from ever being opened; the fstat below is what
  // counts, since the entry may be swapped between the two.
  const seen = await lstat(at).catch((error: unknown) => {
    if (errnoOf(error) === 'ENOENT') return null;
    throw refused(path, `it cannot be inspected (${errnoOf(error)})`, error);
  });
  if (seen === null && !create) return null;
  if (seen !== null && !seen.isFile()) throw refused(path, 'it is not a regular file');
  const flags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | (create ? O_RDWR | O_CREAT : O_RDONLY);
  let handle: FileHandle;
  try {
    handle = await open(at, flags, LOCK_FILE_MODE);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT' && !create) return null;
    throw refused(path, `it cannot be opened (${errnoOf(error)})`, error);
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const problem = !stat.isFile()
      ? 'it is not a regular file'
      : stat.nlink !== 1n
        ? 'it has other hard links'
        : stat.uid !== BigInt(euid())
          ? `it is not owned by uid ${euid()}`
          : null;
    if (problem !== null) throw refused(path, problem);
    return { handle, device: stat.dev, inode: stat.ino };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function childPath(parent: FileHandle, name: string): string {
  return `/proc/self/fd/${parent.fd}/${name}`;
}

function euid(): number {
  return process.geteuid?.() ?? 0;
}

/**
 * A refusal; one caused by EACCES or EPERM is `permission`, since a root-run tool meets those
 * only when run without root (a sandbox it does not own), and says so rather than "I/O error".
 */
function refused(path: string, reason: string, cause?: unknown): LockError {
  const errno = cause === undefined ? null : errnoOf(cause);
  if (errno === 'EACCES' || errno === 'EPERM')
    return new LockError('permission', `the host lock ${path} cannot be used: ${reason}; run as root`);
  return new LockError('unavailable', `the host lock ${path} is unusable: ${reason}`);
}

export function errnoOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'error';
}
