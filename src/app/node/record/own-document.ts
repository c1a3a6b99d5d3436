import type { ErrorCode } from '../../../domain/common/error-codes.js';
import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { FileSystemError, type FileSystemErrorCode } from '../../../domain/common/port-errors.js';
import { dirnamePath } from '../../../domain/node/layout/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../../domain/node/layout/slot-layout.js';
import type { FileSystem } from '../../../ports/node/file-system.js';

/** What a read of a file only the upgrader writes can meet that the upgrader never writes. */
const UNUSABLE_ENTRY: ReadonlyMap<FileSystemErrorCode, string> = new Map([
  ['ENOTREG', 'is not a regular file'],
  ['EISDIR', 'is a directory'],
  ['ELOOP', 'is a symlink'],
  ['ETOOBIG', 'is larger than its size bound'],
]);

export interface OwnDocumentSpec<T> {
  /** What the document is called in messages ("the upgrade record"). */
  readonly what: string;
  /** The code of every content problem (`E_RECORD`, `E_STATE`). */
  readonly code: ErrorCode;
  readonly maxBytes: number;
  readonly parse: (text: string) => Result<T>;
  readonly serialize: (value: T) => string;
}

/**
 * One JSON document the upgrader owns (the record, the state file, the activation marker):
 * written atomically and durably (0600, its directory created 0750), read strictly. Such a file
 * is never a link, a FIFO, a device, oversized or not UTF-8, so finding one is a content problem
 * reported with the document's code and left in place for an operator to inspect; links are not
 * followed, so a planted link to /dev/zero or a FIFO is refused before anything is opened.
 */
export class OwnDocument<T> {
  constructor(
    private readonly fs: FileSystem,
    readonly path: string,
    private readonly spec: OwnDocumentSpec<T>,
  ) {}

  /** The document, or null when absent. */
  async read(): Promise<Result<T | null>> {
    const { spec } = this;
    let bytes: Uint8Array | null;
    try {
      bytes = await this.fs.readFile(this.path, spec.maxBytes, { followLinks: false });
    } catch (error) {
      const unusable = error instanceof FileSystemError ? UNUSABLE_ENTRY.get(error.code) : undefined;
      if (unusable === undefined) throw error;
      return fail(spec.code, `${spec.what} ${this.path} ${unusable}`);
    }
    if (bytes === null) return ok(null);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return fail(spec.code, `${spec.what} ${this.path} is not UTF-8 text`);
    }
    const parsed = spec.parse(text);
    return parsed.ok ? parsed : fail(spec.code, `${spec.what} ${this.path} is invalid: ${parsed.failure.message}`);
  }

  async write(value: T): Promise<void> {
    await this.fs.ensureDirectory(dirnamePath(this.path), STATE_DIRECTORY_MODE);
    await this.fs.writeFileAtomic(this.path, new TextEncoder().encode(this.spec.serialize(value)), {
      mode: RECORD_MODE,
    });
  }

  async delete(): Promise<void> {
    await this.fs.remove(this.path);
  }
}
