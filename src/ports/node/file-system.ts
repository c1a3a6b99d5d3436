import type { Sha256 } from '../../domain/common/digest.js';

/**
 * The host filesystem as the upgrader needs it — a handful of high-level, crash-aware
 * operations rather than a mirror of node:fs. All paths are absolute.
 *
 * Durability contract, shared by every implementation:
 * - A mutating call that resolves has made its effect durable: data fsynced, the entry renamed
 *   into place, and the containing directory fsynced. A crash before it resolves leaves either
 *   the old state or the new state at the destination, never a mix; at worst a temp entry named
 *   `.<basename>.tmp-*` is left in the destination directory (callers may sweep those).
 * - Mutating calls are idempotent: repeating one with the same arguments has the same result.
 * - Failures are thrown as `FileSystemError` (src/domain/common/port-errors.ts) with an errno-style code; nothing else is thrown
 *   except programming errors. An fsync failure is final for that file (never retried).
 */
export interface FileSystem {
  /** Facts about the entry itself, not following a final symlink; `null` when absent. */
  lstat(path: string): Promise<EntryStat | null>;

  /** The raw text stored in a symlink; `null` when the entry is absent. Throws EINVAL for non-links. */
  readLink(path: string): Promise<string | null>;

  /**
   * Follows every symlink in `path`. Returns the real path and facts about what it names, or
   * `missing` when a component does not exist (a dangling link), or `loop` on ELOOP.
   */
  resolve(path: string): Promise<Resolution>;

  /**
   * Reads a whole regular file, refusing (ETOOBIG) past `maxBytes` without reading more than
   * that bound; `null` when absent. Never blocks on what it finds: a FIFO, a device or a socket
   * is refused with ENOTREG (a directory with EISDIR) before any data is read. Follows links
   * unless `followLinks` is false, in which case a symlink at `path` itself is refused (ELOOP).
   */
  readFile(path: string, maxBytes: number, options?: ReadFileOptions): Promise<Uint8Array | null>;

  /**
   * Up to `bytes` bytes of a regular file from `offset` (fewer at its end, none past it);
   * `null` when absent. Follows links.
   */
  readRange(path: string, offset: number, bytes: number): Promise<Uint8Array | null>;

  /** SHA-256 and size of a file's content (follows links), refusing past `maxBytes`. */
  hashFile(path: string, maxBytes: number): Promise<FileDigest>;

  /**
   * Replaces `path` with `data` atomically and durably: temp file in the same directory, write,
   * chmod, fsync, rename over `path`, fsync the directory. The parent must exist.
   */
  writeFileAtomic(path: string, data: Uint8Array, options: { readonly mode: number }): Promise<void>;

  /**
   * Copies `source` (following links) over `target` with the same atomic, durable protocol as
   * `writeFileAtomic`, streaming, and refusing (ETOOBIG, nothing written) past `maxBytes`.
   * Returns the digest of the bytes written, hashed while copying.
   */
  copyFileAtomic(
    source: string,
    target: string,
    options: { readonly mode: number; readonly maxBytes: number },
  ): Promise<FileDigest>;

  /**
   * Moves `source`, a private regular file (never a symlink: ELOOP) that nobody else writes,
   * over `target` without copying it: fchmod to `mode`, fsync, rename
   * over `target` (the entry itself is replaced, a symlink there is never followed), fsync the
   * directory. Before the rename the content is hashed from the open descriptor: past `maxBytes`
   * (ETOOBIG) or unequal to `sha256` (ECHANGED) nothing moves; on another filesystem (EXDEV)
   * nothing but the source's mode changed. Repeating a move that completed (source gone, target
   * holding those bytes with that mode) succeeds. Returns the digest.
   */
  moveFileAtomic(
    source: string,
    target: string,
    options: { readonly mode: number; readonly maxBytes: number; readonly sha256: Sha256 },
  ): Promise<FileDigest>;

  /**
   * Makes `link` a symlink whose stored text is `target`, atomically: the old entry (a link or a
   * regular file, never a directory: EISDIR) is replaced in one rename, so `link` never goes
   * missing. The directory is fsynced before this resolves.
   */
  replaceSymlink(link: string, target: string): Promise<void>;

  /**
   * Starts writing a file that will replace `target` only when committed: a temp file in the
   * target's directory, written chunk by chunk (ETOOBIG past `maxBytes`, nothing kept). Used to
   * stream a download's member into place after the whole archive has been verified.
   */
  stageFile(target: string, options: { readonly mode: number; readonly maxBytes: number }): Promise<StagedFile>;

  /** Removes a file or symlink (never a directory) and fsyncs the directory. Absent is success. */
  remove(path: string): Promise<void>;

  /**
   * Creates `path` with `mode` and any missing parents with 0755 (existing directories keep
   * their mode), fsyncing every parent on the way (an earlier attempt may have crashed between
   * mkdir and fsync). An existing non-directory is ENOTDIR.
   */
  ensureDirectory(path: string, mode: number): Promise<void>;

  /** Names in a directory (not `.`/`..`), sorted; `null` when absent. */
  listDirectory(path: string): Promise<readonly string[] | null>;
}

/**
 * A file being written next to its target. `seal` fsyncs it and returns how many bytes were
 * written (no digest: the caller verified the bytes on their way in, and hashing them again
 * would cost a second pass on the hot path); `commit` renames it over the target and fsyncs
 * the directory; `discard` removes it. After `commit` or `discard` the handle is spent;
 * `discard` after `commit` does nothing.
 */
export interface StagedFile {
  write(chunk: Uint8Array): Promise<void>;
  seal(): Promise<{ readonly bytes: number }>;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

export interface ReadFileOptions {
  /** Default true. False for files only the upgrader writes, which are never legitimately links. */
  readonly followLinks?: boolean;
}

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

export interface EntryStat {
  readonly kind: EntryKind;
  /** Permission bits only (mode & 0o7777). */
  readonly mode: number;
  readonly uid: number;
  readonly size: number;
}

export type Resolution =
  | { readonly kind: 'resolved'; readonly path: string; readonly stat: EntryStat }
  | { readonly kind: 'missing' }
  | { readonly kind: 'loop' };

export interface FileDigest {
  readonly sha256: Sha256;
  readonly bytes: number;
}
