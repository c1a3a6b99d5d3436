import { fail, ok, type Result } from '../../domain/failure.js';
import { dirnamePath } from '../../domain/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../domain/slot-layout.js';
import { emptyUpgradeState, parseUpgradeState, serializeUpgradeState, STATE_TEXT_MAX_BYTES, type UpgradeState } from '../../domain/upgrade-state.js';
import type { FileSystem } from '../../ports/file-system.js';
import { readOwnFile } from '../record/record-store.js';

/**
 * The upgrade state file (slot digests and versions, quarantine, highest committed version):
 * absent means empty; a file that does not parse — or is a link, a special file or oversized —
 * is `E_STATE` and is never overwritten blindly.
 */
export class StateStore {
  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  async read(): Promise<Result<UpgradeState>> {
    const read = await readOwnFile(this.fs, this.path, STATE_TEXT_MAX_BYTES);
    if ('unusable' in read) return fail('E_STATE', `the upgrade state ${this.path} ${read.unusable}`);
    if (read.bytes === null) return ok(emptyUpgradeState());
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
    } catch {
      return fail('E_STATE', `the upgrade state ${this.path} is not UTF-8 text`);
    }
    const parsed = parseUpgradeState(text);
    return parsed.ok ? parsed : fail('E_STATE', `the upgrade state ${this.path} is invalid: ${parsed.failure.message}`);
  }

  async write(state: UpgradeState): Promise<void> {
    await this.fs.ensureDirectory(dirnamePath(this.path), STATE_DIRECTORY_MODE);
    await this.fs.writeFileAtomic(this.path, new TextEncoder().encode(serializeUpgradeState(state)), { mode: RECORD_MODE });
  }
}
