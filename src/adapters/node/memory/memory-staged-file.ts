import { FileSystemError } from '../../../domain/common/port-errors.js';
import type { StagedFile } from '../../../ports/node/file-system.js';
import { tooBigError } from '../host/file-system-shared.js';

/** The steps a staged write needs from the memory file system, each one of its ops. */
export interface StagingSteps {
  /** create-temp with all the bytes, then fsync-file; returns the temp path. */
  writeTemp(target: string, data: Uint8Array, mode: number): string;
  /** rename over the target, then fsync-dir. */
  renameIntoPlace(temp: string, target: string): void;
  /** best-effort unlink of the temp (a cleanup op). */
  removeTemp(temp: string): void;
}

/**
 * A staged write in the model. Chunks are buffered and reach the tree as one create-temp op at
 * `seal`: before an fsync nothing is durable anyway, so crash points are the same as on disk.
 */
export class MemoryStagedFile implements StagedFile {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  private temp: string | null = null;
  private phase: 'writing' | 'sealed' | 'done' = 'writing';

  constructor(
    private readonly steps: StagingSteps,
    private readonly target: string,
    private readonly mode: number,
    private readonly maxBytes: number,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.phase !== 'writing') throw new FileSystemError('EINVAL', 'stageFile', this.target, 'not writing');
    if (this.bytes + chunk.length > this.maxBytes) {
      await this.discard();
      throw tooBigError('stageFile', this.target, this.maxBytes);
    }
    this.chunks.push(Uint8Array.from(chunk));
    this.bytes += chunk.length;
  }

  async seal(): Promise<{ readonly bytes: number }> {
    if (this.phase !== 'writing') throw new FileSystemError('EINVAL', 'stageFile', this.target, 'not writing');
    const data = new Uint8Array(this.bytes);
    let offset = 0;
    for (const chunk of this.chunks) {
      data.set(chunk, offset);
      offset += chunk.length;
    }
    this.phase = 'sealed';
    try {
      this.temp = this.steps.writeTemp(this.target, data, this.mode);
    } catch (error) {
      this.phase = 'done';
      throw error;
    }
    return { bytes: data.length };
  }

  async commit(): Promise<void> {
    if (this.phase !== 'sealed' || this.temp === null)
      throw new FileSystemError('EINVAL', 'stageFile', this.target, 'commit before seal');
    this.phase = 'done';
    this.steps.renameIntoPlace(this.temp, this.target);
  }

  async discard(): Promise<void> {
    if (this.phase === 'done') return;
    this.phase = 'done';
    if (this.temp !== null) this.steps.removeTemp(this.temp);
  }
}
