import { ok, type Result } from '../../../domain/common/failure.js';
import {
  emptyUpgradeState,
  parseUpgradeState,
  serializeUpgradeState,
  STATE_TEXT_MAX_BYTES,
  type UpgradeState,
} from '../../../domain/node/record/upgrade-state.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { OwnDocument } from '../record/own-document.js';

/**
 * The upgrade state file (slot digests and versions, quarantine, highest committed version):
 * absent means empty; a file that does not parse — or is a link, a special file or oversized —
 * is `E_STATE` and is never overwritten blindly.
 */
export class StateStore extends OwnDocument<UpgradeState> {
  constructor(fs: FileSystem, path: string) {
    super(fs, path, {
      what: 'the upgrade state',
      code: 'E_STATE',
      maxBytes: STATE_TEXT_MAX_BYTES,
      parse: parseUpgradeState,
      serialize: serializeUpgradeState,
    });
  }

  override async read(): Promise<Result<UpgradeState>> {
    const read = await super.read();
    if (!read.ok) return read;
    return ok(read.value ?? emptyUpgradeState());
  }
}
