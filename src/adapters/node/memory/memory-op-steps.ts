import { basenamePath, dirnamePath } from '../../../domain/node/layout/posix-path.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import { asFileSystemError, tooBigError } from '../host/file-system-shared.js';
import type { DurableLayer } from './durable-layer.js';
import type { StagingSteps } from './memory-staged-file.js';
import type { MoveSteps } from './memory-move-file.js';
import { SimulatedCrash, type OpKind, type OpRunner } from './memory-ops.js';
import type { VisibleLayer } from './visible-layer.js';

/**
 * The memory file system's micro-steps over its two layers: each mutation is one numbered op
 * (crashable, faultable, journalled), fsyncs copy the visible state into the durable layer, and
 * temp files get deterministic names and a best-effort cleanup. The port's operations
 * (MemoryFileSystem) are sequences of these.
 */
export class MemoryOpSteps {
  private tempCounter = 0;

  constructor(
    private readonly ops: OpRunner,
    private readonly visible: VisibleLayer,
    private readonly durable: DurableLayer,
  ) {}

  step(op: OpKind, path: string, detail: string | undefined, effect: () => void): void {
    this.ops.run(op, path, detail, effect);
  }

  /** A read: not an op, but a dead process cannot do it either. */
  read<T>(operation: string, path: string, body: () => T): T {
    this.ops.assertAlive();
    try {
      return body();
    } catch (error) {
      throw asFileSystemError(error, operation, path);
    }
  }

  readExisting(operation: string, path: string, maxBytes: number): Uint8Array {
    const data = this.visible.readFile(path);
    if (data === null) throw new FileSystemError('ENOENT', operation, path);
    if (data.length > maxBytes) throw tooBigError(operation, path, maxBytes);
    return data;
  }

  /** Protocol W as ops: create-temp (+write, chmod), fsync-file, rename, fsync-dir. */
  replaceFile(path: string, data: Uint8Array, mode: number): void {
    const temp = this.tempPathFor(path);
    this.withTempCleanup(temp, () => {
      this.step('create-temp', temp, `${data.length} bytes`, () => this.visible.createExclusive(temp, data, mode));
      this.step('fsync-file', temp, undefined, () => this.syncFile(temp));
      this.step('rename', path, temp, () => this.visible.renameOver(temp, path));
    });
    this.syncParent(path);
  }

  /** The fsync-dir op for the directory holding `path`. */
  syncParent(path: string): void {
    this.step('fsync-dir', dirnamePath(path), undefined, () => this.syncDirectory(dirnamePath(path)));
  }

  moveSteps(): MoveSteps {
    return {
      lstat: (path) => this.visible.lstat(path),
      content: (path) => this.visible.readFile(path),
      chmodAndSync: (path, mode) =>
        this.step('fsync-file', path, mode.toString(8), () => {
          const { ino } = this.visible.fileState(path);
          // The layer has no chmod of its own; setMeta is what createExclusive uses for the mode.
          this.visible['setMeta'](ino, mode, this.visible.uidOf(ino));
          this.syncFile(path);
        }),
      renameOver: (from, to) => this.step('rename', to, from, () => this.visible.renameOver(from, to)),
      syncDirectory: (path) => this.step('fsync-dir', path, undefined, () => this.syncDirectory(path)),
    };
  }

  stagingSteps(): StagingSteps {
    return {
      writeTemp: (path, data, mode) => {
        const temp = this.tempPathFor(path);
        this.withTempCleanup(temp, () => {
          this.step('create-temp', temp, `${data.length} bytes`, () => this.visible.createExclusive(temp, data, mode));
          this.step('fsync-file', temp, undefined, () => this.syncFile(temp));
        });
        return temp;
      },
      renameIntoPlace: (temp, path) => {
        this.withTempCleanup(temp, () => this.step('rename', path, temp, () => this.visible.renameOver(temp, path)));
        this.syncParent(path);
      },
      removeTemp: (temp) => {
        if (this.visible.raw(temp) === null) return;
        try {
          this.step('cleanup', temp, undefined, () => this.visible.unlink(temp));
        } catch (error) {
          if (error instanceof SimulatedCrash) throw error;
        }
      },
    };
  }

  /**
   * Runs `body`; if it fails (not by crashing: a dead process cleans nothing) while the temp
   * exists, unlinks the temp as a best-effort `cleanup` op and rethrows the original failure.
   */
  withTempCleanup(temp: string, body: () => void): void {
    try {
      body();
    } catch (error) {
      if (error instanceof SimulatedCrash || this.visible.raw(temp) === null) throw error;
      try {
        this.step('cleanup', temp, undefined, () => this.visible.unlink(temp));
      } catch (cleanupError) {
        if (cleanupError instanceof SimulatedCrash) throw cleanupError;
      }
      throw error;
    }
  }

  /** Deterministic names (runs replay exactly), skipping any left behind by an earlier life. */
  tempPathFor(path: string): string {
    const directory = dirnamePath(path);
    const prefix = `${directory === '/' ? '' : directory}/.${basenamePath(path)}.tmp-`;
    // Ends: every candidate is new and a directory holds finitely many entries.
    for (;;) {
      const candidate = `${prefix}${this.tempCounter}`;
      this.tempCounter += 1;
      if (this.read('temp', candidate, () => this.visible.raw(candidate)) === null) return candidate;
    }
  }

  syncFile(path: string): void {
    const { ino, data, mode } = this.visible.fileState(path);
    this.durable.syncFile(ino, data, mode);
  }

  syncDirectory(path: string): void {
    const { realPath, entries } = this.visible.directoryState(path);
    this.durable.syncDirectory(realPath, entries);
  }
}
