import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, stat } from 'node:fs/promises';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { EntryKind, EntryStat } from '../../../ports/node/file-system.js';
import { errnoCode } from './file-system-shared.js';

// Looking up, describing and creating single entries on node:fs, for the FileSystem adapter.

export function hasCode(error: unknown, code: string): boolean {
  return errnoCode(error) === code;
}

export function entryStat(stats: Stats): EntryStat {
  return { kind: kindOf(stats), mode: stats.mode & 0o7777, uid: stats.uid, size: stats.size };
}

function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** The entry itself (a link is not followed), or `null` when nothing is there. */
export async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return null;
    throw error;
  }
}

/** What the path leads to (links followed), or `null` when that is missing. */
export async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return null;
    throw error;
  }
}

/** mkdir applies the umask, so the exact mode is set afterwards. A racing creator is fine. */
export async function mkdirExact(path: string, mode: number): Promise<void> {
  try {
    await mkdir(path, { mode });
  } catch (error) {
    if (!hasCode(error, 'EEXIST')) throw error;
    if (!(await statOrNull(path))?.isDirectory()) throw new FileSystemError('ENOTDIR', 'ensureDirectory', path);
    return;
  }
  await chmod(path, mode);
}
