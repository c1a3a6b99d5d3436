import { constants, crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { type Bytes, bytes, concatBytes, plain } from './bytes.js';

/**
 * gzip layer samples (RFC 1952). The policy under test is "exactly one member, nothing after
 * it but zero padding", while node's gunzip happily decodes concatenated members
 * (nodejs/node #4306, PR #5120) — hence the builders for each way of breaking that.
 */

const GZIP_TRAILER = 8;
/** 10-byte header: magic, deflate, no flags, mtime 0, no extra flags, OS unknown. */
const HEADER = Uint8Array.of(0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff);

/** One gzip member. mtime 0 so the bytes (and their SHA-256) are reproducible. */
export function gzip(data: Bytes): Uint8Array {
  return plain(gzipSync(bytes(data), { level: 9 }));
}

/** Two or more members back to back; `gunzip` and node both decode all of them. */
export function concatenatedGzip(first: Bytes, second: Bytes, ...more: readonly Bytes[]): Uint8Array {
  return concatBytes(...[first, second, ...more].map(gzip));
}

/** A valid member followed by `trailing` (garbage, zero padding, a second gzip magic, …). */
export function gzipWithTrailing(data: Bytes, trailing: Bytes): Uint8Array {
  return concatBytes(gzip(data), bytes(trailing));
}

export type GzipCut = 'in-deflate' | 'in-trailer' | { readonly keepBytes: number };

/**
 * A member cut short: `in-deflate` keeps the header and half the deflate data; `in-trailer`
 * keeps everything up to the middle of the 8-byte CRC32/ISIZE trailer.
 */
export function truncatedGzip(data: Bytes, cut: GzipCut): Uint8Array {
  const whole = gzip(data);
  const deflateLength = whole.length - HEADER.length - GZIP_TRAILER;
  const keep =
    cut === 'in-deflate'
      ? HEADER.length + Math.max(1, Math.floor(deflateLength / 2))
      : cut === 'in-trailer'
        ? whole.length - GZIP_TRAILER / 2
        : cut.keepBytes;
  if (keep <= 0 || keep >= whole.length) throw new RangeError(`cut keeps ${keep} of ${whole.length} bytes`);
  return whole.slice(0, keep);
}

const SEGMENT = 1 << 20;

/**
 * A valid gzip member that inflates to `decompressedBytes` zeros (RFC 1952 compliant, so
 * `gzip -t` passes), at deflate's ~1000:1 limit: 10 GiB costs ~10 MiB.
 *
 * It is built without deflating the whole stream: one MiB of zeros is deflated with a sync
 * flush (byte-aligned, no final block). That segment starts with a literal 0 and then only
 * copies at distance 1, so it decodes to the same MiB after any run of zeros and can simply be
 * repeated. The CRC32 of n zeros comes from CRC linearity (`crc32Zeros`), so building a 10 GiB
 * bomb takes milliseconds and memory is the compressed size only.
 */
export function gzipBomb(decompressedBytes: number): Uint8Array {
  if (!Number.isSafeInteger(decompressedBytes) || decompressedBytes < 1) throw new RangeError('need >= 1 byte');
  const full = Math.floor(decompressedBytes / SEGMENT);
  const rest = decompressedBytes % SEGMENT;
  const segment = (n: number): Uint8Array =>
    plain(deflateRawSync(new Uint8Array(n), { level: 9, finishFlush: constants.Z_SYNC_FLUSH }));
  const body = full > 0 ? segment(SEGMENT) : new Uint8Array(0);
  const tail = rest > 0 ? segment(rest) : new Uint8Array(0);
  const finalBlock = Uint8Array.of(0x03, 0x00); // BFINAL=1, fixed Huffman, end-of-block only
  const out = new Uint8Array(HEADER.length + body.length * full + tail.length + finalBlock.length + GZIP_TRAILER);
  out.set(HEADER, 0);
  let at = HEADER.length;
  for (let i = 0; i < full; i++, at += body.length) out.set(body, at);
  out.set(tail, at);
  at += tail.length;
  out.set(finalBlock, at);
  at += finalBlock.length;
  const view = new DataView(out.buffer);
  view.setUint32(at, crc32Zeros(decompressedBytes), true);
  view.setUint32(at + 4, decompressedBytes % 2 ** 32, true); // ISIZE is the length mod 2^32
  return out;
}

/**
 * An infinite but always-valid gzip prefix: header, then stored (uncompressed) deflate blocks
 * of `blockBytes` forever, never a final block. Inflates to `prefix` followed by `fill` bytes
 * repeated, so a client sees well-formed data (even a tar header, via `prefix`) until its
 * compressed-byte cap trips. Feed it to the `endless({ source })` server behaviour.
 */
export function* endlessGzip(
  options: { blockBytes?: number; prefix?: Uint8Array; fill?: number } = {},
): Generator<Uint8Array> {
  const size = options.blockBytes ?? 16 * 1024;
  if (size < 1 || size > 0xffff) throw new RangeError('stored deflate blocks hold 1..65535 bytes');
  yield HEADER;
  const stored = (data: Uint8Array): Uint8Array => {
    const block = new Uint8Array(5 + data.length);
    block[0] = 0x00; // BFINAL=0, BTYPE=00 (stored), rest of the byte is padding
    new DataView(block.buffer).setUint16(1, data.length, true);
    new DataView(block.buffer).setUint16(3, ~data.length & 0xffff, true);
    block.set(data, 5);
    return block;
  };
  const prefix = options.prefix ?? new Uint8Array(0);
  for (let at = 0; at < prefix.length; at += size) yield stored(prefix.subarray(at, at + size));
  const filler = stored(new Uint8Array(size).fill(options.fill ?? 0));
  for (;;) yield filler;
}

// --- CRC-32 of n zero bytes, via GF(2) matrix powers (the method of zlib's crc32_combine) ---

type Matrix = Uint32Array; // 32 columns, each a uint32

function times(mat: Matrix, vec: number): number {
  let sum = 0;
  for (let i = 0; vec !== 0; i++, vec >>>= 1) if (vec & 1) sum ^= mat[i] ?? 0;
  return sum >>> 0;
}

function square(mat: Matrix): Matrix {
  const out = new Uint32Array(32);
  for (let i = 0; i < 32; i++) out[i] = times(mat, mat[i] ?? 0);
  return out;
}

/** crc32 of `n` zeros: apply the "append one zero bit" operator 8n times to the register. */
export function crc32Zeros(n: number): number {
  // Operator for one zero bit on the pre/post-inverted register used by zlib.
  let op: Matrix = new Uint32Array(32);
  op[0] = 0xedb88320;
  for (let i = 1; i < 32; i++) op[i] = (1 << (i - 1)) >>> 0;
  op = square(square(square(op))); // one zero byte
  // The register starts at 0xffffffff (crc of '' is 0, pre-inverted) and is inverted at the end.
  let reg = 0xffffffff;
  for (let k = n; k > 0; k = Math.floor(k / 2)) {
    if (k % 2 === 1) reg = times(op, reg);
    op = square(op);
  }
  return (reg ^ 0xffffffff) >>> 0;
}

/** zlib's own crc32, re-exported so tests can cross-check `crc32Zeros` on small inputs. */
export { crc32 };
