import { fail, ok, type Result } from '../../domain/failure.js';
import { dirnamePath } from '../../domain/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../domain/slot-layout.js';
import { emptyUpgradeState, parseUpgradeState, serializeUpgradeState, STATE_TEXT_MAX_BYTES, type UpgradeState } from '../../domain/upgrade-state.js';
import type { FileSystem } from '../../ports/file-system.js';

/**
 * The upgrade state file (slot digests and versions, quarantine, highest committed version):
 * absent means empty; a file that does not parse is `E_STATE` and is never overwritten blindly.
 */
export class StateStore {
  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  async read(): Promise<Result<UpgradeState>> {
    const bytes = await this.fs.readFile(this.path, STATE_TEXT_MAX_BYTES);
    if (bytes === null) return ok(emptyUpgradeState());
    const parsed = parseUpgradeState(new TextDecoder().decode(bytes));
    return parsed.ok ? parsed : fail('E_STATE', `the upgrade state ${this.path} is invalid: ${parsed.failure.message}`);
  }

  async write(state: UpgradeState): Promise<void> {
    await this.fs.ensureDirectory(dirnamePath(this.path), STATE_DIRECTORY_MODE);
    await this.fs.writeFileAtomic(this.path, new TextEncoder().encode(serializeUpgradeState(state)), { mode: RECORD_MODE });
  }
}
