import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { FileSystemError } from '../../../domain/common/port-errors.js';

/** Temp files start private; the final mode is set just before they are made durable. */
export const TEMP_MODE = 0o600;

/** A unique sibling name, so the final rename stays inside one directory (and one filesystem). */
export function tempPathFor(path: string): string {
  return `${dirname(path)}/.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`;
}

/** Makes the directory's entries durable: open it read-only and fsync that descriptor. */
export async function fsyncDirectory(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    if (bytesWritten <= 0) throw new FileSystemError('EIO', 'write', '', 'no progress');
    offset += bytesWritten;
  }
}
