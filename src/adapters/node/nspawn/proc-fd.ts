import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/*
 * Node has no openat/renameat/mkdirat; on Linux, `/proc/self/fd/<fd>/<name>` is the
 * stand-in: the kernel resolves `/proc/self/fd/<fd>` to the very directory the descriptor was
 * opened on (wherever that directory is now, whatever its old path has become), then looks
 * `<name>` up inside it. Every operation on a rootfs entry goes through such a path, so nothing
 * the container does to the path after we opened a directory can redirect us.
 */

/** A directory opened for lookups below it: never through a final symlink. */
export const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Reads a file in the rootfs: no final symlink, and O_NONBLOCK so a FIFO planted there cannot
 * block the open (a non-regular file is then refused after fstat).
 */
export const READ_FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Our temp files: created fresh (never an existing entry, never through a link). */
export const CREATE_TEMP_FLAGS = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;

/** `name` looked up inside the directory `directory` is open on; `name` must be one component. */
export function procPath(directory: FileHandle, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) {
    throw new TypeError(`not a single path component: ${JSON.stringify(name)}`);
  }
  return `/proc/self/fd/${directory.fd}/${name}`;
}

/** The directory itself, for listing it. */
export function procDirectoryPath(directory: FileHandle): string {
  return `/proc/self/fd/${directory.fd}`;
}
