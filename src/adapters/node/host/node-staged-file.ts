import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { StagedFile } from '../../../ports/node/file-system.js';
import { asFileSystemError, tooBigError } from './file-system-shared.js';
import { fsyncDirectory, TEMP_MODE, tempPathFor, writeAll } from './node-fs-primitives.js';

type Phase = 'writing' | 'sealed' | 'done';

const WRITE_BATCH_BYTES = 256 * 1024;

/**
 * Protocol W split in two: the bytes stream into a temp file next to the target while the caller
 * verifies them elsewhere (an archive's digest covers bytes that arrive after the member), and
 * only `commit` makes them the target. Any failure leaves no temp behind.
 */
export class NodeStagedFile implements StagedFile {
  private phase: Phase = 'writing';
  private bytes = 0;
  // Small chunks (tar and HTTP hand out tens of KiB) are gathered into large writes.
  private readonly pending: Uint8Array[] = [];
  private pendingBytes = 0;

  private constructor(
    private readonly target: string,
    private readonly temp: string,
    private handle: FileHandle | null,
    private readonly mode: number,
    private readonly maxBytes: number,
  ) {}

  static async create(target: string, mode: number, maxBytes: number): Promise<NodeStagedFile> {
    const temp = tempPathFor(target);
    try {
      const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
      return new NodeStagedFile(target, temp, await open(temp, flags, TEMP_MODE), mode, maxBytes);
    } catch (error) {
      throw asFileSystemError(error, 'stageFile', target);
    }
  }

  async write(chunk: Uint8Array): Promise<void> {
    const handle = this.expect('writing');
    if (this.bytes + chunk.length > this.maxBytes) {
      await this.discard();
      throw tooBigError('stageFile', this.target, this.maxBytes);
    }
    this.bytes += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= WRITE_BATCH_BYTES) await this.flush(handle);
  }

  private async flush(handle: FileHandle): Promise<void> {
    const batch = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending.length = 0;
    this.pendingBytes = 0;
    if (batch === undefined) return;
    try {
      await writeAll(handle, batch);
    } catch (error) {
      await this.discard();
      throw asFileSystemError(error, 'stageFile', this.target);
    }
  }

  async seal(): Promise<{ readonly bytes: number }> {
    const handle = this.expect('writing');
    await this.flush(handle);
    try {
      await handle.chmod(this.mode);
      await handle.sync();
      this.handle = null;
      await handle.close();
    } catch (error) {
      await this.discard();
      throw asFileSystemError(error, 'stageFile', this.target);
    }
    this.phase = 'sealed';
    return { bytes: this.bytes };
  }

  async commit(): Promise<void> {
    if (this.phase !== 'sealed') throw new FileSystemError('EINVAL', 'stageFile', this.target, 'commit before seal');
    try {
      await rename(this.temp, this.target);
      this.phase = 'done';
      await fsyncDirectory(dirname(this.target));
    } catch (error) {
      if (this.phase !== 'done') await this.discard();
      throw asFileSystemError(error, 'stageFile', this.target);
    }
  }

  async discard(): Promise<void> {
    if (this.phase === 'done') return;
    this.phase = 'done';
    const handle = this.handle;
    this.handle = null;
    await handle?.close().catch(() => undefined);
    await unlink(this.temp).catch(() => undefined);
  }

  private expect(phase: 'writing'): FileHandle {
    if (this.phase !== phase || this.handle === null)
      throw new FileSystemError('EINVAL', 'stageFile', this.target, `not ${phase}`);
    return this.handle;
  }
}
