import {
  parseRecord,
  RECORD_TEXT_MAX_BYTES,
  serializeRecord,
  type UpgradeRecord,
} from '../../../domain/node/record/upgrade-record.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { OwnDocument } from './own-document.js';

/**
 * The upgrade record on disk: written atomically and durably (0600), read strictly. A record
 * that does not parse — or is not a regular file of bounded size at all — is reported as
 * `E_RECORD` and left in place for an operator to inspect.
 */
export class RecordStore extends OwnDocument<UpgradeRecord> {
  constructor(fs: FileSystem, path: string) {
    super(fs, path, {
      what: 'the upgrade record',
      code: 'E_RECORD',
      maxBytes: RECORD_TEXT_MAX_BYTES,
      parse: parseRecord,
      serialize: serializeRecord,
    });
  }
}
