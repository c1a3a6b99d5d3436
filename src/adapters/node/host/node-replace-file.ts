import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { asFileSystemError } from './file-system-shared.js';
import { fsyncDirectory, TEMP_MODE, tempPathFor } from './node-fs-primitives.js';

/**
 * Protocol W: temp in the destination directory (exclusive, no-follow, 0600), fill, fchmod to
 * the final mode, fsync, close, rename over `path`, fsync the directory. The temp is unlinked
 * on any failure before the rename; an fsync failure is final (never retried).
 */
export async function replaceFile<T>(
  path: string,
  mode: number,
  operation: string,
  fill: (temp: FileHandle) => Promise<T>,
): Promise<T> {
  const temp = tempPathFor(path);
  let handle: FileHandle | null = null;
  let tempExists = false;
  try {
    const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
    handle = await open(temp, flags, TEMP_MODE);
    tempExists = true;
    const result = await fill(handle);
    await handle.chmod(mode);
    await handle.sync();
    const closing = handle;
    handle = null;
    await closing.close();
    await rename(temp, path);
    tempExists = false;
    await fsyncDirectory(dirname(path));
    return result;
  } catch (error) {
    if (handle !== null) await handle.close().catch(() => undefined);
    if (tempExists) await unlink(temp).catch(() => undefined);
    throw asFileSystemError(error, operation, path);
  }
}
