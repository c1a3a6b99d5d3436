import { bytes, concatBytes } from './bytes.js';
import { releaseTar } from './release.js';

/**
 * Bodies served as "the .tar.gz" that are not gzip at all (catalogue C #35, B #25). Only the
 * leading magic matters to a gzip reader, so the non-tar formats are magic plus plausible
 * header bytes, not complete files.
 */
export interface NotGzipSamples {
  /** An uncompressed release tar (ustar magic at offset 257, not at 0). */
  readonly plainTar: Uint8Array;
  /** zip local file header `PK\x03\x04`. */
  readonly zip: Uint8Array;
  /** zstd frame magic `28 b5 2f fd`. */
  readonly zstd: Uint8Array;
  /** xz stream magic `fd 37 7a 58 5a 00`. */
  readonly xz: Uint8Array;
  /** bzip2 `BZh9`. */
  readonly bzip2: Uint8Array;
  /** A captive-portal login page served with status 200. */
  readonly html: Uint8Array;
  /** Zero bytes. */
  readonly empty: Uint8Array;
  /** Gzip magic with compression method 7 (reserved), which no decoder accepts. */
  readonly gzipBadMethod: Uint8Array;
  /** Only the two magic bytes. */
  readonly gzipMagicOnly: Uint8Array;
}

const filler = new Uint8Array(64).fill(0x41);

export function notGzipSamples(memberName = 'aks-flex-node-linux-amd64'): NotGzipSamples {
  return {
    plainTar: releaseTar(memberName, '\x7fELF fake binary\n'),
    zip: concatBytes(Uint8Array.of(0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00), filler),
    zstd: concatBytes(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00), filler),
    xz: concatBytes(Uint8Array.of(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04), filler),
    bzip2: concatBytes(bytes('BZh91AY&SY'), filler),
    html: bytes(
      '<!DOCTYPE html>\n<html><head><title>Sign in to Guest Wi-Fi</title></head>\n' +
        '<body><form action="/login" method="post"><input name="user"><input type="password" name="pass">' +
        '<button>Connect</button></form></body></html>\n',
    ),
    empty: new Uint8Array(0),
    gzipBadMethod: concatBytes(Uint8Array.of(0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0xff), filler),
    gzipMagicOnly: Uint8Array.of(0x1f, 0x8b),
  };
}
