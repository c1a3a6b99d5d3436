import { type Bytes, bytes } from './bytes.js';
import { gzip } from './gzip.js';
import { tarArchive, tarEntry } from './tar.js';

/** The uncompressed good case: exactly one regular-file entry, mode 0755, two end blocks. */
export function releaseTar(memberName: string, content: Bytes): Uint8Array {
  return tarArchive([tarEntry({ name: memberName, type: 'file', mode: 0o755 }, bytes(content))]);
}

/**
 * The good case the archive rules accept: one gzip member holding a tar with exactly one regular
 * file.
 */
export function releaseArchive(memberName: string, content: Bytes): Uint8Array {
  return gzip(releaseTar(memberName, content));
}
