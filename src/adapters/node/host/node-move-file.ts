import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sha256FromHex, type Sha256 } from '../../../domain/common/digest.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { FileDigest } from '../../../ports/node/file-system.js';
import { asFileSystemError, errnoCode, tooBigError } from './file-system-shared.js';
import { lstatOrNull } from './node-entries.js';
import { fsyncDirectory } from './node-fs-primitives.js';

const HASH_CHUNK_BYTES = 1024 * 1024;

export interface MoveOptions {
  readonly mode: number;
  readonly maxBytes: number;
  readonly sha256: Sha256;
}

/**
 * FileSystem.moveFileAtomic on node:fs: the bytes are verified from the descriptor that is
 * fsynced, and the path is checked to still name that inode just before the rename, so what
 * lands on `target` is what was hashed. No second copy of the file is ever needed on disk.
 */
export async function moveFileAtomic(source: string, target: string, options: MoveOptions): Promise<FileDigest> {
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: a symlink planted at the source would otherwise be what gets renamed.
    handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return alreadyMoved(source, target, options);
    throw asFileSystemError(error, 'moveFileAtomic', source);
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new FileSystemError('EINVAL', 'moveFileAtomic', source, 'not a regular file');
    const digest = await hashOpen(handle, source, options.maxBytes);
    if (digest.sha256 !== options.sha256)
      throw new FileSystemError('ECHANGED', 'moveFileAtomic', source, 'content differs from the expected digest');
    // rename(2) refuses a directory too, but only after the mode changed: refuse it first.
    if ((await lstatOrNull(target))?.isDirectory() === true)
      throw new FileSystemError('EISDIR', 'moveFileAtomic', target);
    await handle.chmod(options.mode);
    await handle.sync();
    const named = await lstat(source);
    if (named.ino !== opened.ino || named.dev !== opened.dev)
      throw new FileSystemError('ECHANGED', 'moveFileAtomic', source, 'replaced while it was verified');
    await rename(source, target);
    await fsyncDirectory(dirname(target));
    if (dirname(source) !== dirname(target)) await fsyncDirectory(dirname(source));
    return digest;
  } catch (error) {
    // Named apart from other errors: the caller can copy instead, nothing having moved.
    if (errnoCode(error) === 'EXDEV') throw new FileSystemError('EXDEV', 'moveFileAtomic', target);
    throw asFileSystemError(error, 'moveFileAtomic', target);
  } finally {
    await handle.close();
  }
}

async function hashOpen(handle: FileHandle, source: string, maxBytes: number): Promise<FileDigest> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  let bytes = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, bytes);
    if (bytesRead === 0) return { sha256: sha256FromHex(hash.digest('hex')), bytes };
    bytes += bytesRead;
    if (bytes > maxBytes) throw tooBigError('moveFileAtomic', source, maxBytes);
    hash.update(buffer.subarray(0, bytesRead));
  }
}

/**
 * The source is gone: a repeat of a move that completed (perhaps before a crash, so the
 * directory is fsynced again) succeeds when the target holds exactly those bytes and mode.
 */
async function alreadyMoved(source: string, target: string, options: MoveOptions): Promise<FileDigest> {
  const missing = new FileSystemError('ENOENT', 'moveFileAtomic', source);
  let handle: FileHandle;
  try {
    handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw missing;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || (stats.mode & 0o7777) !== options.mode || stats.size > options.maxBytes) throw missing;
    const digest = await hashOpen(handle, target, options.maxBytes);
    if (digest.sha256 !== options.sha256) throw missing;
    await fsyncDirectory(dirname(target));
    return digest;
  } catch (error) {
    throw asFileSystemError(error, 'moveFileAtomic', target);
  } finally {
    await handle.close();
  }
}
