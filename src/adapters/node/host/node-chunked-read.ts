import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { FileSystemError } from '../../../domain/common/port-errors.js';

// Reading a regular file piece by piece (hashing, copying, a range) on node:fs.

/**
 * Opens a regular file for reading, following links. O_NONBLOCK keeps a FIFO planted at the
 * path from blocking the open; anything but a regular file is then refused.
 */
export async function openRegularFile(path: string, operation: string): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new FileSystemError('EISDIR', operation, path);
    if (!stats.isFile()) throw new FileSystemError('EINVAL', operation, path, 'not a regular file');
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads to the end in bounded chunks, refusing once more than `maxBytes` arrive. */
export async function readChunks(
  handle: FileHandle,
  chunkBytes: number,
  maxBytes: number,
  tooBig: () => FileSystemError,
  onChunk: (chunk: Uint8Array) => Promise<void> | void,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(chunkBytes);
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return total;
    total += bytesRead;
    if (total > maxBytes) throw tooBig();
    await onChunk(buffer.subarray(0, bytesRead));
  }
}
