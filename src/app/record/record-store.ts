import { fail, ok, type Result } from '../../domain/failure.js';
import { FileSystemError, type FileSystemErrorCode } from '../../domain/port-errors.js';
import { dirnamePath } from '../../domain/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../domain/slot-layout.js';
import { parseRecord, RECORD_TEXT_MAX_BYTES, serializeRecord, type UpgradeRecord } from '../../domain/upgrade-record.js';
import type { FileSystem } from '../../ports/file-system.js';

/**
 * The upgrade record on disk: written atomically and durably (0600), read strictly. A record
 * that does not parse — or is not a regular file of bounded size at all — is reported as
 * `E_RECORD` and left in place for an operator to inspect.
 */
export class RecordStore {
  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  async read(): Promise<Result<UpgradeRecord | null>> {
    const read = await readOwnFile(this.fs, this.path, RECORD_TEXT_MAX_BYTES);
    if ('unusable' in read) return fail('E_RECORD', `the upgrade record ${this.path} ${read.unusable}`);
    if (read.bytes === null) return ok(null);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
    } catch {
      return fail('E_RECORD', `the upgrade record ${this.path} is not UTF-8 text`);
    }
    const parsed = parseRecord(text);
    return parsed.ok ? parsed : fail('E_RECORD', `the upgrade record ${this.path} is invalid: ${parsed.failure.message}`);
  }

  async write(record: UpgradeRecord): Promise<void> {
    await this.fs.ensureDirectory(dirnamePath(this.path), STATE_DIRECTORY_MODE);
    await this.fs.writeFileAtomic(this.path, new TextEncoder().encode(serializeRecord(record)), { mode: RECORD_MODE });
  }

  async delete(): Promise<void> {
    await this.fs.remove(this.path);
  }
}

/** What a read of a file only the upgrader writes can meet that the upgrader never writes. */
const UNUSABLE_ENTRY: ReadonlyMap<FileSystemErrorCode, string> = new Map([
  ['ENOTREG', 'is not a regular file'],
  ['EISDIR', 'is a directory'],
  ['ELOOP', 'is a symlink'],
  ['ETOOBIG', 'is larger than its size bound'],
]);

/**
 * Reads a file the upgrader writes by atomic replacement (the record, the state file). Such a
 * file is never a link, a FIFO, a device or oversized, so finding one is a content problem the
 * caller reports with its own code, not an I/O failure; links are not followed, so a planted
 * link to /dev/zero or a FIFO is refused before anything is opened through it.
 */
export async function readOwnFile(fs: FileSystem, path: string, maxBytes: number): Promise<{ readonly bytes: Uint8Array | null } | { readonly unusable: string }> {
  try {
    return { bytes: await fs.readFile(path, maxBytes, { followLinks: false }) };
  } catch (error) {
    const unusable = error instanceof FileSystemError ? UNUSABLE_ENTRY.get(error.code) : undefined;
    if (unusable === undefined) throw error;
    return { unusable };
  }
}
