import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { sha256FromHex } from '../../../domain/common/digest.js';
import { ContainerError } from '../../../domain/common/port-errors.js';
import type { FileDigest } from '../../../ports/node/file-system.js';
import { errnoCode } from '../host/file-system-shared.js';
import { CREATE_TEMP_FLAGS, procDirectoryPath, procPath, READ_FILE_FLAGS } from './proc-fd.js';
import { lstatAt, refusedEntryError } from './rootfs-walk.js';

/*
 * File operations inside an already-opened rootfs directory. Every path is the directory's
 * descriptor plus one name (see proc-fd.ts), so none of them can be redirected out of it.
 */

const CHUNK_BYTES = 1024 * 1024;
/** Temp files start private; the final mode is set just before they are made durable. */
const TEMP_MODE = 0o600;

/** Temps of `name` left by an interrupted copy: ours by name, e.g. `.aks-flex-node.tmp-1a2b3c`. */
export function tempPrefix(name: string): string {
  return `.${name}.tmp-`;
}

/**
 * Removes stale temps of `name` before a new copy, so crashes do not accumulate files in the
 * rootfs. unlink never follows a link (a planted `.name.tmp-x` → /etc/passwd just loses the
 * link); directories are not ours and are left alone. The directory fsync after the rename
 * makes the removals durable too.
 */
export async function sweepTemps(directory: FileHandle, name: string): Promise<void> {
  const prefix = tempPrefix(name);
  for (const entry of await readdir(procDirectoryPath(directory))) {
    if (!entry.startsWith(prefix)) continue;
    const stats = await lstatAt(directory, entry);
    if (stats === null || stats.isDirectory()) continue;
    try {
      await unlink(procPath(directory, entry));
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error; // a racing sweeper got there first
    }
  }
}

/**
 * Refuses to replace anything but a regular file (or nothing) at `name`. The rename would
 * replace a symlink itself rather than write through it, but a link there means the rootfs was
 * tampered with, so it is refused all the same.
 */
export async function checkReplaceableTarget(directory: FileHandle, name: string, machine: string): Promise<void> {
  const stats = await lstatAt(directory, name);
  if (stats !== null && !stats.isFile()) throw refusedEntryError(stats, machine, name, 'a regular file');
}

/**
 * Copies `source` over `name` in `directory` atomically and durably: an exclusive no-follow
 * temp in the same directory, written while hashing exactly the bytes written, refused past
 * `maxBytes` (temp removed), fchmod to `mode`, fsync, rename over `name`, fsync the directory.
 * The mode is set before the fsync so that it is as durable as the content.
 */
export async function replaceFileIn(
  directory: FileHandle,
  name: string,
  source: FileHandle,
  options: { readonly mode: number; readonly maxBytes: number },
): Promise<FileDigest> {
  const temp = procPath(directory, `${tempPrefix(name)}${randomBytes(6).toString('hex')}`);
  let output: FileHandle | null = null;
  let tempExists = false;
  try {
    output = await open(temp, CREATE_TEMP_FLAGS, TEMP_MODE);
    tempExists = true;
    const hash = createHash('sha256');
    const target = output;
    const bytes = await readBounded(source, options.maxBytes, async (chunk) => {
      await writeAll(target, chunk);
      hash.update(chunk);
    });
    await output.chmod(options.mode);
    await output.sync();
    const closing = output;
    output = null;
    await closing.close();
    await rename(temp, procPath(directory, name));
    tempExists = false;
    await directory.sync();
    return { sha256: sha256FromHex(hash.digest('hex')), bytes };
  } catch (error) {
    if (output !== null) await output.close().catch(() => undefined);
    if (tempExists) await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * Opens `name` in `directory` for reading without following it; `null` when absent. Anything
 * but a regular file is refused (a symlink as 'symlink-refused').
 */
export async function openRegularFileAt(
  directory: FileHandle,
  name: string,
  machine: string,
): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(procPath(directory, name), READ_FILE_FLAGS);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw refusedEntryError(await lstatAt(directory, name), machine, name, 'a regular file');
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refusedEntryError(stats, machine, name, 'a regular file');
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** Opens a host file to copy from, following links (it is ours, not the container's); regular files only. */
export async function openRegularSource(path: string): Promise<{ readonly handle: FileHandle; readonly size: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new ContainerError('io', 'the binary to copy into the container is not a regular file');
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** SHA-256 and size of an open file, refusing ('too-large') past `maxBytes`. */
export async function hashBounded(handle: FileHandle, maxBytes: number): Promise<FileDigest> {
  const hash = createHash('sha256');
  const bytes = await readBounded(handle, maxBytes, (chunk) => {
    hash.update(chunk);
  });
  return { sha256: sha256FromHex(hash.digest('hex')), bytes };
}

export function tooLargeError(maxBytes: number): ContainerError {
  return new ContainerError('too-large', `the binary is larger than the container copy allows (${maxBytes} bytes)`);
}

/**
 * Reads to the end in chunks, refusing once more than `maxBytes` arrive: the size seen by
 * fstat is only a first check, since a file may grow while it is read.
 */
async function readBounded(
  handle: FileHandle,
  maxBytes: number,
  onChunk: (chunk: Uint8Array) => Promise<void> | void,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return total;
    total += bytesRead;
    if (total > maxBytes) throw tooLargeError(maxBytes);
    await onChunk(buffer.subarray(0, bytesRead));
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    if (bytesWritten <= 0) throw new ContainerError('io', 'writing the container copy made no progress');
    offset += bytesWritten;
  }
}
