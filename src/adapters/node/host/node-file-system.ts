import { createHash } from 'node:crypto';
import { lstat, readdir, readlink, realpath, rename, symlink, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { sha256FromHex } from '../../../domain/common/digest.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type {
  EntryStat,
  FileDigest,
  FileSystem,
  ReadFileOptions,
  Resolution,
  StagedFile,
} from '../../../ports/node/file-system.js';
import { asFileSystemError, componentsOf, PARENT_DIRECTORY_MODE, tooBigError } from './file-system-shared.js';
import { openRegularFile, readChunks } from './node-chunked-read.js';
import { entryStat, hasCode, lstatOrNull, mkdirExact, statOrNull } from './node-entries.js';
import { fsyncDirectory, tempPathFor, writeAll } from './node-fs-primitives.js';
import { moveFileAtomic, type MoveOptions } from './node-move-file.js';
import { readRegularFile } from './node-read-file.js';
import { replaceFile } from './node-replace-file.js';
import { NodeStagedFile } from './node-staged-file.js';

const COPY_CHUNK_BYTES = 1024 * 1024;

/** The FileSystem port over node:fs/promises, following the crash-consistency protocols W and S. */
export class NodeFileSystem implements FileSystem {
  async lstat(path: string): Promise<EntryStat | null> {
    try {
      const stats = await lstatOrNull(path);
      return stats === null ? null : entryStat(stats);
    } catch (error) {
      throw asFileSystemError(error, 'lstat', path);
    }
  }

  async readLink(path: string): Promise<string | null> {
    try {
      const stats = await lstatOrNull(path);
      if (stats === null) return null;
      if (!stats.isSymbolicLink()) throw new FileSystemError('EINVAL', 'readLink', path, 'not a symlink');
      return await readlink(path);
    } catch (error) {
      throw asFileSystemError(error, 'readLink', path);
    }
  }

  async resolve(path: string): Promise<Resolution> {
    try {
      const real = await realpath(path);
      return { kind: 'resolved', path: real, stat: entryStat(await lstat(real)) };
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return { kind: 'missing' };
      if (hasCode(error, 'ELOOP')) return { kind: 'loop' };
      throw asFileSystemError(error, 'resolve', path);
    }
  }

  async readFile(path: string, maxBytes: number, options: ReadFileOptions = {}): Promise<Uint8Array | null> {
    return readRegularFile(path, maxBytes, options.followLinks !== false);
  }

  async readRange(path: string, offset: number, bytes: number): Promise<Uint8Array | null> {
    let opened: { handle: FileHandle; size: number };
    try {
      opened = await openRegularFile(path, 'readRange');
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return null;
      throw asFileSystemError(error, 'readRange', path);
    }
    try {
      const buffer = Buffer.alloc(Math.max(0, Math.min(bytes, opened.size - offset)));
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, offset);
      return new Uint8Array(buffer.subarray(0, bytesRead));
    } catch (error) {
      throw asFileSystemError(error, 'readRange', path);
    } finally {
      await opened.handle.close();
    }
  }

  async hashFile(path: string, maxBytes: number): Promise<FileDigest> {
    try {
      const { handle, size } = await openRegularFile(path, 'hashFile');
      try {
        if (size > maxBytes) throw tooBigError('hashFile', path, maxBytes);
        const hash = createHash('sha256');
        const bytes = await readChunks(
          handle,
          COPY_CHUNK_BYTES,
          maxBytes,
          () => tooBigError('hashFile', path, maxBytes),
          (chunk) => {
            hash.update(chunk);
          },
        );
        return { sha256: sha256FromHex(hash.digest('hex')), bytes };
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw asFileSystemError(error, 'hashFile', path);
    }
  }

  async writeFileAtomic(path: string, data: Uint8Array, options: { readonly mode: number }): Promise<void> {
    await replaceFile(path, options.mode, 'writeFileAtomic', (temp) => writeAll(temp, data));
  }

  async copyFileAtomic(
    source: string,
    target: string,
    options: { readonly mode: number; readonly maxBytes: number },
  ): Promise<FileDigest> {
    const { maxBytes } = options;
    let opened: { handle: FileHandle; size: number };
    try {
      opened = await openRegularFile(source, 'copyFileAtomic');
    } catch (error) {
      throw asFileSystemError(error, 'copyFileAtomic', source);
    }
    const { handle: input, size } = opened;
    try {
      // Refuse up front when we already know, so nothing at all is created.
      if (size > maxBytes) throw tooBigError('copyFileAtomic', source, maxBytes);
      return await replaceFile(target, options.mode, 'copyFileAtomic', async (output) => {
        const hash = createHash('sha256');
        // The source may grow while we copy: the bound is enforced on the bytes read too.
        const bytes = await readChunks(
          input,
          COPY_CHUNK_BYTES,
          maxBytes,
          () => tooBigError('copyFileAtomic', source, maxBytes),
          async (chunk) => {
            hash.update(chunk);
            await writeAll(output, chunk);
          },
        );
        return { sha256: sha256FromHex(hash.digest('hex')), bytes };
      });
    } catch (error) {
      throw asFileSystemError(error, 'copyFileAtomic', target);
    } finally {
      await input.close();
    }
  }

  moveFileAtomic(source: string, target: string, options: MoveOptions): Promise<FileDigest> {
    return moveFileAtomic(source, target, options);
  }

  async replaceSymlink(link: string, target: string): Promise<void> {
    const directory = dirname(link);
    const temp = tempPathFor(link);
    try {
      if ((await lstatOrNull(link))?.isDirectory()) throw new FileSystemError('EISDIR', 'replaceSymlink', link);
      await symlink(target, temp);
      try {
        // Read back: catches a target the kernel stored differently from what we asked for.
        const stored = await readlink(temp);
        if (stored !== target) throw new FileSystemError('EIO', 'replaceSymlink', link, 'link text read back differs');
        await rename(temp, link);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      await fsyncDirectory(directory);
    } catch (error) {
      throw asFileSystemError(error, 'replaceSymlink', link);
    }
  }

  async stageFile(target: string, options: { readonly mode: number; readonly maxBytes: number }): Promise<StagedFile> {
    return NodeStagedFile.create(target, options.mode, options.maxBytes);
  }

  async remove(path: string): Promise<void> {
    try {
      const stats = await lstatOrNull(path);
      if (stats?.isDirectory()) throw new FileSystemError('EISDIR', 'remove', path);
      if (stats !== null) await unlink(path);
      // Also when already absent: a crashed earlier attempt may have unlinked without the fsync.
      if ((await statOrNull(dirname(path)))?.isDirectory()) await fsyncDirectory(dirname(path));
    } catch (error) {
      throw asFileSystemError(error, 'remove', path);
    }
  }

  async ensureDirectory(path: string, mode: number): Promise<void> {
    try {
      for (const component of componentsOf(path)) {
        const stats = await statOrNull(component);
        if (stats === null) {
          // A dangling symlink stats as absent but mkdir would fail on it: it is not a directory.
          if ((await lstatOrNull(component)) !== null)
            throw new FileSystemError('ENOTDIR', 'ensureDirectory', component);
          await mkdirExact(component, component === path ? mode : PARENT_DIRECTORY_MODE);
        } else if (!stats.isDirectory()) {
          throw new FileSystemError('ENOTDIR', 'ensureDirectory', component);
        }
        // Every parent, changed or not: an earlier attempt may have crashed between mkdir and fsync.
        await fsyncDirectory(dirname(component));
      }
    } catch (error) {
      throw asFileSystemError(error, 'ensureDirectory', path);
    }
  }

  async listDirectory(path: string): Promise<readonly string[] | null> {
    try {
      return (await readdir(path)).sort();
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return null;
      throw asFileSystemError(error, 'listDirectory', path);
    }
  }
}
