import {
  parseWatch,
  serializeWatch,
  WATCH_TEXT_MAX_BYTES,
  type WatchWindow,
} from '../../../domain/node/record/watch-window.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { OwnDocument } from './own-document.js';

/** The watch window on disk: atomic, durable, 0600, read strictly (`E_RECORD`). */
export class WatchStore extends OwnDocument<WatchWindow> {
  constructor(fs: FileSystem, path: string) {
    super(fs, path, {
      what: 'the watch window',
      code: 'E_RECORD',
      maxBytes: WATCH_TEXT_MAX_BYTES,
      parse: parseWatch,
      serialize: serializeWatch,
    });
  }
}
