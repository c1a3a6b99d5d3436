import { constants, type Stats } from 'node:fs';
import { lstat, open, stat, type FileHandle } from 'node:fs/promises';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import { asFileSystemError, errnoCode, tooBigError } from './file-system-shared.js';

const READ_CHUNK_BYTES = 64 * 1024;

/**
 * `FileSystem.readFile` over node:fs: a whole regular file, at most `maxBytes`, never blocking.
 *
 * The entry is looked at before it is opened, so a device is not even opened (opening one can
 * have effects of its own); the open then uses O_NONBLOCK, so a FIFO swapped in meanwhile
 * cannot block it, O_NOCTTY, so a terminal never becomes ours, and O_NOFOLLOW when links are
 * not to be followed; fstat of the descriptor decides. Reads stop one byte past the bound: a
 * file that grows, or lies about its size (procfs), is never read whole.
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  followLinks: boolean,
): Promise<Uint8Array | null> {
  let handle: FileHandle;
  try {
    const before = await (followLinks ? stat(path) : lstat(path));
    refuseUnlessRegular(before, path, followLinks);
    const noFollow = followLinks ? 0 : constants.O_NOFOLLOW;
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | noFollow);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw asFileSystemError(error, 'readFile', path);
  }
  try {
    const opened = await handle.stat();
    refuseUnlessRegular(opened, path, followLinks);
    if (opened.size > maxBytes) throw tooBigError('readFile', path, maxBytes);
    return await readAtMost(handle, maxBytes, path);
  } catch (error) {
    throw asFileSystemError(error, 'readFile', path);
  } finally {
    await handle.close();
  }
}

function refuseUnlessRegular(stats: Stats, path: string, followLinks: boolean): void {
  if (stats.isFile()) return;
  if (stats.isDirectory()) throw new FileSystemError('EISDIR', 'readFile', path);
  if (stats.isSymbolicLink() && !followLinks)
    throw new FileSystemError('ELOOP', 'readFile', path, 'a symlink, not followed');
  throw new FileSystemError('ENOTREG', 'readFile', path, 'not a regular file');
}

async function readAtMost(handle: FileHandle, maxBytes: number, path: string): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  // Ends: every pass reads at least one byte or returns, and at most maxBytes + 1 are accepted.
  for (;;) {
    const want = Math.min(READ_CHUNK_BYTES, maxBytes + 1 - total);
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buffer, 0, want, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    total += bytesRead;
    if (total > maxBytes) throw tooBigError('readFile', path, maxBytes);
    chunks.push(buffer.subarray(0, bytesRead));
  }
}
