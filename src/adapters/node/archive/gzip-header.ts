/**
 * Parses the fixed and optional fields of a gzip member header (RFC 1952 §2.3) from the start
 * of a buffer. Returns the header length, `null` when more bytes are needed, or a reason the
 * bytes are not a gzip member we accept.
 */
export const GZIP_HEADER_MAX_BYTES = 64 * 1024;

const FLAG_HCRC = 0x02;
const FLAG_EXTRA = 0x04;
const FLAG_NAME = 0x08;
const FLAG_COMMENT = 0x10;
const FLAG_RESERVED = 0xe0;

export type GzipHeader =
  | { readonly kind: 'complete'; readonly length: number }
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'invalid'; readonly reason: string };

export function parseGzipHeader(bytes: Uint8Array): GzipHeader {
  if (bytes.length >= 1 && bytes[0] !== 0x1f) return { kind: 'invalid', reason: 'not gzip data (bad magic)' };
  if (bytes.length >= 2 && bytes[1] !== 0x8b) return { kind: 'invalid', reason: 'not gzip data (bad magic)' };
  if (bytes.length >= 3 && bytes[2] !== 8) return { kind: 'invalid', reason: 'unsupported gzip compression method' };
  if (bytes.length < 10) return { kind: 'incomplete' };
  const flags = bytes[3] ?? 0;
  if ((flags & FLAG_RESERVED) !== 0) return { kind: 'invalid', reason: 'reserved gzip header flags are set' };
  let offset = 10;
  if ((flags & FLAG_EXTRA) !== 0) {
    if (bytes.length < offset + 2) return { kind: 'incomplete' };
    offset += 2 + ((bytes[offset] ?? 0) | ((bytes[offset + 1] ?? 0) << 8));
  }
  for (const flag of [FLAG_NAME, FLAG_COMMENT]) {
    if ((flags & flag) === 0) continue;
    const end = bytes.indexOf(0, offset);
    if (end < 0)
      return bytes.length >= GZIP_HEADER_MAX_BYTES
        ? { kind: 'invalid', reason: 'gzip header field too long' }
        : { kind: 'incomplete' };
    offset = end + 1;
  }
  if ((flags & FLAG_HCRC) !== 0) offset += 2;
  if (offset > GZIP_HEADER_MAX_BYTES) return { kind: 'invalid', reason: 'gzip header too long' };
  return bytes.length < offset ? { kind: 'incomplete' } : { kind: 'complete', length: offset };
}
