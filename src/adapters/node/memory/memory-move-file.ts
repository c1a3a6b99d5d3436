import { dirnamePath } from '../../../domain/node/layout/posix-path.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { EntryStat, FileDigest } from '../../../ports/node/file-system.js';
import { tooBigError } from '../host/file-system-shared.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import { digestOf } from './memory-tree.js';

/** What a move needs from the memory file system: reads, and each mutation as one of its ops. */
export interface MoveSteps {
  /** The entry itself, not following a final symlink; `null` when absent. */
  lstat(path: string): EntryStat | null;
  content(path: string): Uint8Array | null;
  /**
   * One fsync-file op: sets the mode, then makes content and mode durable. On disk the fchmod
   * and the fsync are two calls, but a crash between them leaves an unsynced private file that
   * power loss may return with either mode, which is what this op's absence models.
   */
  chmodAndSync(path: string, mode: number): void;
  /** One rename op (the entry itself is replaced). */
  renameOver(source: string, target: string): void;
  /** One fsync-dir op. */
  syncDirectory(path: string): void;
}

/**
 * FileSystem.moveFileAtomic in the model, as ops fsync-file, rename, fsync-dir (and fsync-dir
 * of the source's directory when it differs): the same crash points a real move has, and none
 * of the create-temp a copy needs.
 */
export function moveInModel(
  steps: MoveSteps,
  source: string,
  target: string,
  options: { readonly mode: number; readonly maxBytes: number; readonly sha256: Sha256 },
): FileDigest {
  const entry = steps.lstat(source);
  if (entry === null) return alreadyMoved(steps, source, target, options);
  if (entry.kind === 'symlink') throw new FileSystemError('ELOOP', 'moveFileAtomic', source);
  if (entry.kind !== 'file') throw new FileSystemError('EINVAL', 'moveFileAtomic', source, 'not a regular file');
  const data = steps.content(source) ?? new Uint8Array(0);
  if (data.length > options.maxBytes) throw tooBigError('moveFileAtomic', source, options.maxBytes);
  const digest = digestOf(data);
  if (digest.sha256 !== options.sha256)
    throw new FileSystemError('ECHANGED', 'moveFileAtomic', source, 'content differs from the expected digest');
  if (steps.lstat(target)?.kind === 'directory') throw new FileSystemError('EISDIR', 'moveFileAtomic', target);
  steps.chmodAndSync(source, options.mode);
  steps.renameOver(source, target);
  steps.syncDirectory(dirnamePath(target));
  if (dirnamePath(source) !== dirnamePath(target)) steps.syncDirectory(dirnamePath(source));
  return digest;
}

/** A repeat of a completed move (perhaps crashed before its fsync-dir) succeeds, syncing again. */
function alreadyMoved(
  steps: MoveSteps,
  source: string,
  target: string,
  options: { readonly mode: number; readonly maxBytes: number; readonly sha256: Sha256 },
): FileDigest {
  const existing = steps.lstat(target);
  const data = existing?.kind === 'file' && existing.mode === options.mode ? steps.content(target) : null;
  if (data === null || data.length > options.maxBytes || digestOf(data).sha256 !== options.sha256) {
    throw new FileSystemError('ENOENT', 'moveFileAtomic', source);
  }
  steps.syncDirectory(dirnamePath(target));
  return digestOf(data);
}
