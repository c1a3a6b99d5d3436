import { Volume, type IProcess } from 'memfs';
import { basenamePath, dirnamePath } from '../../../domain/node/layout/posix-path.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { EntryKind, EntryStat } from '../../../ports/node/file-system.js';
import type { DurableEntry } from './durable-layer.js';
import { childPath, DEFAULT_DIRECTORY_MODE, SYMLINK_MODE, type TreeEntry } from './memory-tree.js';

/** The permission bits a FIFO of the model reports (mkfifo's under the usual umask). */
const FIFO_MODE = 0o644;

interface RawEntry {
  readonly kind: EntryKind;
  readonly ino: number;
}

/**
 * The process memfs consults, with the uid and gid read once. memfs asks for both at every path
 * lookup (two syscalls each), which was 40% of the layout crash-point enumeration; the model
 * never changes them, and memfs uses them only for permission checks that its permissive modes
 * always pass (see VisibleLayer). Everything else is the real process, as memfs's default is.
 */
const PROCESS_UID = process.getuid?.() ?? 0;
const PROCESS_GID = process.getgid?.() ?? 0;
const MEMFS_PROCESS: IProcess = {
  getuid: () => PROCESS_UID,
  getgid: () => PROCESS_GID,
  cwd: () => process.cwd(),
  platform: process.platform,
  emitWarning: (message, type) => process.emitWarning(message, type),
  env: process.env,
};

function isNoEntry(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

/**
 * The visible layer: what a live process sees, on a memfs Volume. memfs enforces permission bits
 * even for uid 0 and has no notion of our owners, so its own modes stay permissive (0666/0777)
 * and the modes and owners the port reports live here, keyed by inode — the model acts as root.
 * Methods throw memfs errors (errno codes) or FileSystemError; callers map them.
 */
export class VisibleLayer {
  private readonly vol = Volume.fromJSON({}, undefined, { process: MEMFS_PROCESS });
  private readonly modes = new Map<number, number>();
  private readonly uids = new Map<number, number>();
  /** memfs has no FIFOs: one is an empty file whose inode is listed here, and never a regular file. */
  private readonly fifos = new Set<number>();

  constructor(private readonly defaultUid: number) {
    this.setMeta(this.vol.lstatSync('/').ino, DEFAULT_DIRECTORY_MODE, defaultUid);
  }

  static load(entries: readonly TreeEntry[], defaultUid: number): VisibleLayer {
    const layer = new VisibleLayer(defaultUid);
    for (const entry of entries) {
      layer.ensureParents(entry.path);
      switch (entry.kind) {
        case 'file':
          layer.vol.writeFileSync(entry.path, entry.data);
          layer.setMeta(layer.ino(entry.path), entry.mode, entry.uid);
          break;
        case 'symlink':
          layer.vol.symlinkSync(entry.target, entry.path);
          layer.uids.set(layer.ino(entry.path), entry.uid);
          break;
        case 'directory':
          // Sorted input lists a parent first, but an implied one may already exist.
          if (layer.raw(entry.path) === null) layer.vol.mkdirSync(entry.path);
          layer.setMeta(layer.ino(entry.path), entry.mode, entry.uid);
          break;
        case 'fifo':
          layer.vol.writeFileSync(entry.path, new Uint8Array(0));
          layer.setMeta(layer.ino(entry.path), FIFO_MODE, entry.uid);
          layer.fifos.add(layer.ino(entry.path));
          break;
      }
    }
    return layer;
  }

  uidOf(ino: number): number {
    return this.uids.get(ino) ?? this.defaultUid;
  }

  setOwner(path: string, uid: number): void {
    this.uids.set(this.ino(path), uid);
  }

  /** lstat: the entry itself; `null` when absent. */
  raw(path: string): RawEntry | null {
    try {
      const stats = this.vol.lstatSync(path);
      const kind: EntryKind = stats.isFile()
        ? this.fifos.has(stats.ino)
          ? 'other'
          : 'file'
        : stats.isDirectory()
          ? 'directory'
          : stats.isSymbolicLink()
            ? 'symlink'
            : 'other';
      return { kind, ino: stats.ino };
    } catch (error) {
      if (isNoEntry(error)) return null;
      throw error;
    }
  }

  /** stat: what the path names after following links; `null` when absent or dangling. */
  rawFollowing(path: string): RawEntry | null {
    try {
      return this.raw(this.realpath(path));
    } catch (error) {
      if (isNoEntry(error)) return null;
      throw error;
    }
  }

  lstat(path: string): EntryStat | null {
    const entry = this.raw(path);
    if (entry === null) return null;
    const uid = this.uidOf(entry.ino);
    switch (entry.kind) {
      case 'symlink':
        return { kind: 'symlink', mode: SYMLINK_MODE, uid, size: new TextEncoder().encode(this.readLink(path)).length };
      case 'file':
        return { kind: 'file', mode: this.modeOf(entry.ino), uid, size: this.vol.lstatSync(path).size };
      default:
        return { kind: entry.kind, mode: this.modeOf(entry.ino), uid, size: 0 };
    }
  }

  readLink(path: string): string {
    return String(this.vol.readlinkSync(path));
  }

  realpath(path: string): string {
    return String(this.vol.realpathSync(path));
  }

  /** Content of a regular file, following links; `null` when absent. */
  readFile(path: string): Uint8Array | null {
    const entry = this.rawFollowing(path);
    if (entry === null) return null;
    if (entry.kind === 'directory') throw new FileSystemError('EISDIR', 'read', path);
    if (entry.kind === 'other') throw new FileSystemError('ENOTREG', 'read', path, 'not a regular file');
    const data = this.vol.readFileSync(path);
    return typeof data === 'string' ? new TextEncoder().encode(data) : Uint8Array.from(data);
  }

  list(path: string): string[] | null {
    try {
      return this.vol
        .readdirSync(path)
        .map((name) => String(name))
        .sort();
    } catch (error) {
      if (isNoEntry(error)) return null;
      throw error;
    }
  }

  /** The durable facts of a file now: its inode, content and mode (for fsync-file). */
  fileState(path: string): { ino: number; data: Uint8Array; mode: number } {
    const ino = this.vol.statSync(path).ino;
    return { ino, data: this.readFile(path) ?? new Uint8Array(0), mode: this.modeOf(ino) };
  }

  /** A directory's entries as fsync-dir captures them, under the directory's real path. */
  directoryState(path: string): { realPath: string; entries: Map<string, DurableEntry> } {
    const realPath = this.realpath(path);
    const entries = new Map<string, DurableEntry>();
    for (const name of this.list(realPath) ?? []) {
      const child = childPath(realPath, name);
      const entry = this.raw(child);
      if (entry === null) continue;
      if (entry.kind === 'symlink')
        entries.set(name, { kind: 'symlink', ino: entry.ino, target: this.readLink(child) });
      else if (entry.kind === 'directory')
        entries.set(name, { kind: 'directory', ino: entry.ino, mode: this.modeOf(entry.ino) });
      else entries.set(name, { kind: entry.kind === 'other' ? 'fifo' : 'file', ino: entry.ino });
    }
    return { realPath, entries };
  }

  /** Every entry below `/`, parents first. */
  walk(): TreeEntry[] {
    const entries: TreeEntry[] = [];
    const visit = (directory: string): void => {
      for (const name of this.list(directory) ?? []) {
        const path = childPath(directory, name);
        const entry = this.raw(path);
        if (entry === null) continue;
        const uid = this.uidOf(entry.ino);
        if (entry.kind === 'symlink') {
          entries.push({ path, kind: 'symlink', target: this.readLink(path), uid });
        } else if (entry.kind === 'directory') {
          entries.push({ path, kind: 'directory', mode: this.modeOf(entry.ino), uid });
          visit(path);
        } else if (entry.kind === 'other') {
          entries.push({ path, kind: 'fifo', uid });
        } else {
          entries.push({
            path,
            kind: 'file',
            data: this.readFile(path) ?? new Uint8Array(0),
            mode: this.modeOf(entry.ino),
            uid,
          });
        }
      }
    };
    visit('/');
    return entries;
  }

  // Mutations. Each runs synchronously inside one op.

  /** O_CREAT|O_EXCL (a symlink at the path also counts as existing), write, fchmod. */
  createExclusive(entry: string, data: Uint8Array, mode: number): void {
    const path = this.physical(entry);
    this.vol.writeFileSync(path, data, { flag: 'wx' });
    this.setMeta(this.ino(path), mode, this.defaultUid);
  }

  symlink(target: string, entry: string): void {
    const path = this.physical(entry);
    this.vol.symlinkSync(target, path);
    this.uids.set(this.ino(path), this.defaultUid);
  }

  /**
   * rename(2) of a file or symlink over `destination`, without following either. memfs follows a
   * symlink source, so a link is moved by recreating it; the caller's op makes that atomic.
   */
  renameOver(sourceEntry: string, destinationEntry: string): void {
    const source = this.physical(sourceEntry);
    const destination = this.physical(destinationEntry);
    const moving = this.raw(source);
    if (moving === null) throw new FileSystemError('ENOENT', 'rename', source);
    const existing = this.raw(destination);
    // memfs would let a file replace a directory; the kernel refuses.
    if (existing?.kind === 'directory') throw new FileSystemError('EISDIR', 'rename', destination);
    if (moving.kind !== 'symlink') {
      this.vol.renameSync(source, destination);
      return;
    }
    const target = this.readLink(source);
    if (existing !== null) this.vol.unlinkSync(destination);
    this.vol.symlinkSync(target, destination);
    this.uids.set(this.ino(destination), this.uidOf(moving.ino));
    this.vol.unlinkSync(source);
  }

  unlink(entry: string): void {
    const path = this.physical(entry);
    if (this.raw(path)?.kind === 'directory') throw new FileSystemError('EISDIR', 'unlink', path);
    this.vol.unlinkSync(path);
  }

  mkdir(entry: string, mode: number): void {
    const path = this.physical(entry);
    this.vol.mkdirSync(path);
    this.setMeta(this.ino(path), mode, this.defaultUid);
  }

  /** The entry's path with its parent resolved: memfs refuses some mutations through a symlinked parent. */
  private physical(path: string): string {
    return childPath(this.realpath(dirnamePath(path)), basenamePath(path));
  }

  private ensureParents(path: string): void {
    const parent = dirnamePath(path);
    if (parent === '/' || this.raw(parent) !== null) return;
    this.ensureParents(parent);
    this.vol.mkdirSync(parent);
    this.setMeta(this.ino(parent), DEFAULT_DIRECTORY_MODE, this.defaultUid);
  }

  private ino(path: string): number {
    return this.vol.lstatSync(path).ino;
  }

  private modeOf(ino: number): number {
    return this.modes.get(ino) ?? 0;
  }

  /** Every new file or directory: memfs reuses the inode numbers of removed entries, FIFOs' too. */
  private setMeta(ino: number, mode: number, uid: number): void {
    this.modes.set(ino, mode & 0o7777);
    this.uids.set(ino, uid);
    this.fifos.delete(ino);
  }
}
