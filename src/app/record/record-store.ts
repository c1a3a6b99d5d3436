import { fail, ok, type Result } from '../../domain/failure.js';
import { dirnamePath } from '../../domain/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../domain/slot-layout.js';
import { parseRecord, RECORD_TEXT_MAX_BYTES, serializeRecord, type UpgradeRecord } from '../../domain/upgrade-record.js';
import type { FileSystem } from '../../ports/file-system.js';

/**
 * The upgrade record on disk: written atomically and durably (0600), read strictly. A record
 * that does not parse is reported as `E_RECORD` and left in place for an operator to inspect.
 */
export class RecordStore {
  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  async read(): Promise<Result<UpgradeRecord | null>> {
    const bytes = await this.fs.readFile(this.path, RECORD_TEXT_MAX_BYTES);
    if (bytes === null) return ok(null);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
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
