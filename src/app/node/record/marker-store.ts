import {
  MARKER_TEXT_MAX_BYTES,
  parseMarker,
  serializeMarker,
  type ActivationMarker,
} from '../../../domain/node/activation/activation-marker.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { OwnDocument } from './own-document.js';

/** The direct path's activation marker on disk: atomic, durable, 0600, read strictly (`E_RECORD`). */
export class MarkerStore extends OwnDocument<ActivationMarker> {
  constructor(fs: FileSystem, path: string) {
    super(fs, path, {
      what: 'the activation marker',
      code: 'E_RECORD',
      maxBytes: MARKER_TEXT_MAX_BYTES,
      parse: parseMarker,
      serialize: serializeMarker,
    });
  }
}
