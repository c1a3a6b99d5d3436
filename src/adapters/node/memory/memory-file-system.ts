import { dirnamePath } from '../../../domain/node/layout/posix-path.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import type {
  EntryStat,
  FileDigest,
  FileSystem,
  ReadFileOptions,
  Resolution,
  StagedFile,
} from '../../../ports/node/file-system.js';
import { asFileSystemError, componentsOf, PARENT_DIRECTORY_MODE, tooBigError } from '../host/file-system-shared.js';
import { DurableLayer } from './durable-layer.js';
import { MemoryOpSteps } from './memory-op-steps.js';
import { MemoryStagedFile } from './memory-staged-file.js';
import { moveInModel } from './memory-move-file.js';
import { OpRunner, type FaultCode, type FaultPredicate, type JournalEntry, type MutationHook } from './memory-ops.js';
import { digestOf, entriesFromSpec, snapshotOf, type Snapshot, type TreeEntry, type TreeSpec } from './memory-tree.js';
import { VisibleLayer } from './visible-layer.js';

export { SimulatedCrash } from './memory-ops.js';
export type { FaultCode, FaultPredicate, JournalEntry, MutationHook, OpKind } from './memory-ops.js';
export type { Snapshot, SnapshotEntry, TreeNodeSpec, TreeSpec } from './memory-tree.js';

export interface MemoryFileSystemOptions {
  /** Owner of the initial tree's entries (unless a spec says otherwise) and of new ones. Default 0. */
  readonly uid?: number;
  readonly beforeMutation?: MutationHook;
}

export type RebootMode = 'prefix' | 'synced';

/**
 * The FileSystem port as a model for crash and fault testing: a visible layer (memfs) plus a
 * durable layer. Every mutating micro-step is a numbered op (see `OpKind`) that can be made to
 * crash the process or fail with an errno, and that a hook can observe. Reads are not ops.
 * Behaves as root: modes are stored as given and never block access.
 */
export class MemoryFileSystem implements FileSystem {
  private readonly ops = new OpRunner();
  private readonly durable = new DurableLayer();
  private readonly steps: MemoryOpSteps;

  private constructor(
    private readonly visible: VisibleLayer,
    private readonly defaultUid: number,
  ) {
    this.steps = new MemoryOpSteps(this.ops, visible, this.durable);
  }

  /** Builds a file system holding `tree`; all of it is durable. */
  static fromTree(tree: TreeSpec, options: MemoryFileSystemOptions = {}): MemoryFileSystem {
    const uid = options.uid ?? 0;
    const fs = MemoryFileSystem.fromEntries(entriesFromSpec(tree, uid), uid);
    if (options.beforeMutation !== undefined) fs.beforeMutation(options.beforeMutation);
    return fs;
  }

  private static fromEntries(entries: readonly TreeEntry[], uid: number): MemoryFileSystem {
    const fs = new MemoryFileSystem(VisibleLayer.load(entries, uid), uid);
    fs.steps.syncDirectory('/');
    // Walk what was built rather than `entries`: implied parent directories need syncing too.
    for (const entry of fs.visible.walk()) {
      if (entry.kind === 'directory') fs.steps.syncDirectory(entry.path);
      if (entry.kind === 'file') fs.steps.syncFile(entry.path);
    }
    return fs;
  }

  // ---- the model's own surface (tests) ----

  /** Completed ops, in order. Ops that failed or crashed took an index but are not listed. */
  get journal(): readonly JournalEntry[] {
    return this.ops.journal;
  }

  /** Indexes handed out so far: the next op gets this index. */
  get opCount(): number {
    return this.ops.opCount;
  }

  get crashed(): boolean {
    return this.ops.crashed;
  }

  /** Op `index` throws SimulatedCrash without effect, and so does every call after it. */
  crashAt(index: number): void {
    this.ops.crashAt(index);
  }

  /** Op `index` fails with `code` without effect (the operation then cleans up as usual). */
  failAt(index: number, code: FaultCode): void {
    this.ops.failAt(index, code);
  }

  /** Every op matching `predicate` fails with `code` without effect, until `clearFaults`. */
  failWhen(predicate: FaultPredicate, code: FaultCode): void {
    this.ops.failWhen(predicate, code);
  }

  clearFaults(): void {
    this.ops.clearFaults();
  }

  /** `hook` sees each op before it runs and may throw to abort it; `null` removes it. */
  beforeMutation(hook: MutationHook | null): void {
    this.ops.setHook(hook);
  }

  /** Test setup, not an op: sets the owner the port reports for the entry itself. */
  setOwner(path: string, uid: number): void {
    this.visible.setOwner(path, uid);
  }

  /**
   * A new machine after the process died: `prefix` keeps every completed op (process kill),
   * `synced` keeps only the durable layer (power loss). Fresh journal, no crash point, faults
   * or hook. Callable any number of times, crashed or not.
   */
  reboot(mode: RebootMode): MemoryFileSystem {
    const entries = mode === 'prefix' ? this.visible.walk() : this.durable.survivors((ino) => this.visible.uidOf(ino));
    return MemoryFileSystem.fromEntries(entries, this.defaultUid);
  }

  /** The visible tree as comparable data (walked, so symlinks are included). Works after a crash. */
  snapshot(): Snapshot {
    return snapshotOf(this.visible.walk());
  }

  // ---- FileSystem: reads ----

  async lstat(path: string): Promise<EntryStat | null> {
    return this.steps.read('lstat', path, () => this.visible.lstat(path));
  }

  async readLink(path: string): Promise<string | null> {
    return this.steps.read('readLink', path, () => {
      const entry = this.visible.raw(path);
      if (entry === null) return null;
      if (entry.kind !== 'symlink') throw new FileSystemError('EINVAL', 'readLink', path, 'not a symlink');
      return this.visible.readLink(path);
    });
  }

  async resolve(path: string): Promise<Resolution> {
    return this.steps.read('resolve', path, (): Resolution => {
      let real: string;
      try {
        real = this.visible.realpath(path);
      } catch (error) {
        const code = asFileSystemError(error, 'resolve', path);
        if (code instanceof FileSystemError && code.code === 'ENOENT') return { kind: 'missing' };
        if (code instanceof FileSystemError && code.code === 'ELOOP') return { kind: 'loop' };
        throw error;
      }
      const stat = this.visible.lstat(real);
      return stat === null ? { kind: 'missing' } : { kind: 'resolved', path: real, stat };
    });
  }

  async readFile(path: string, maxBytes: number, options: ReadFileOptions = {}): Promise<Uint8Array | null> {
    return this.steps.read('readFile', path, () => {
      // A FIFO of the model is refused by the visible layer (ENOTREG); the link rule is applied here.
      if (options.followLinks === false && this.visible.lstat(path)?.kind === 'symlink')
        throw new FileSystemError('ELOOP', 'readFile', path, 'a symlink, not followed');
      const data = this.visible.readFile(path);
      if (data !== null && data.length > maxBytes) throw tooBigError('readFile', path, maxBytes);
      return data;
    });
  }

  async readRange(path: string, offset: number, bytes: number): Promise<Uint8Array | null> {
    return this.steps.read('readRange', path, () => this.visible.readFile(path)?.slice(offset, offset + bytes) ?? null);
  }

  async hashFile(path: string, maxBytes: number): Promise<FileDigest> {
    return this.steps.read('hashFile', path, () => digestOf(this.steps.readExisting('hashFile', path, maxBytes)));
  }

  async listDirectory(path: string): Promise<readonly string[] | null> {
    return this.steps.read('listDirectory', path, () => this.visible.list(path));
  }

  // ---- FileSystem: mutations ----

  async writeFileAtomic(path: string, data: Uint8Array, options: { readonly mode: number }): Promise<void> {
    this.ops.assertAlive();
    this.steps.replaceFile(path, Uint8Array.from(data), options.mode);
  }

  async copyFileAtomic(
    source: string,
    target: string,
    options: { readonly mode: number; readonly maxBytes: number },
  ): Promise<FileDigest> {
    // Read first: past maxBytes nothing at all is created.
    const data = this.steps.read('copyFileAtomic', source, () =>
      this.steps.readExisting('copyFileAtomic', source, options.maxBytes),
    );
    this.steps.replaceFile(target, data, options.mode);
    return digestOf(data);
  }

  async moveFileAtomic(
    source: string,
    target: string,
    options: { readonly mode: number; readonly maxBytes: number; readonly sha256: Sha256 },
  ): Promise<FileDigest> {
    return this.steps.read('moveFileAtomic', source, () =>
      moveInModel(this.steps.moveSteps(), source, target, options),
    );
  }

  async replaceSymlink(link: string, target: string): Promise<void> {
    if (this.steps.read('replaceSymlink', link, () => this.visible.raw(link))?.kind === 'directory') {
      throw new FileSystemError('EISDIR', 'replaceSymlink', link);
    }
    const temp = this.steps.tempPathFor(link);
    this.steps.withTempCleanup(temp, () => {
      this.steps.step('symlink-temp', temp, target, () => this.visible.symlink(target, temp));
      const stored = this.steps.read('replaceSymlink', temp, () => this.visible.readLink(temp));
      if (stored !== target) throw new FileSystemError('EIO', 'replaceSymlink', link, 'link text read back differs');
      this.steps.step('rename', link, temp, () => this.visible.renameOver(temp, link));
    });
    this.steps.syncParent(link);
  }

  async stageFile(target: string, options: { readonly mode: number; readonly maxBytes: number }): Promise<StagedFile> {
    this.ops.assertAlive();
    return new MemoryStagedFile(this.steps.stagingSteps(), target, options.mode, options.maxBytes);
  }

  async remove(path: string): Promise<void> {
    const entry = this.steps.read('remove', path, () => this.visible.raw(path));
    if (entry?.kind === 'directory') throw new FileSystemError('EISDIR', 'remove', path);
    if (entry !== null) this.steps.step('unlink', path, undefined, () => this.visible.unlink(path));
    // Also when already absent: a crashed earlier attempt may have unlinked without the fsync.
    const directory = dirnamePath(path);
    if (this.steps.read('remove', directory, () => this.visible.rawFollowing(directory))?.kind === 'directory') {
      this.steps.syncParent(path);
    }
  }

  async ensureDirectory(path: string, mode: number): Promise<void> {
    this.ops.assertAlive();
    for (const component of componentsOf(path)) {
      const existing = this.steps.read('ensureDirectory', component, () => ({
        followed: this.visible.rawFollowing(component),
        itself: this.visible.raw(component),
      }));
      if (existing.followed === null && existing.itself === null) {
        const componentMode = component === path ? mode : PARENT_DIRECTORY_MODE;
        this.steps.step('mkdir', component, componentMode.toString(8), () =>
          this.visible.mkdir(component, componentMode),
        );
      } else if (existing.followed?.kind !== 'directory') {
        throw new FileSystemError('ENOTDIR', 'ensureDirectory', component);
      }
      // Every parent, changed or not: an earlier attempt may have crashed between mkdir and fsync.
      this.steps.syncParent(component);
    }
  }
}
