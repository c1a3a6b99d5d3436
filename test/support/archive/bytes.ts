import { createHash } from 'node:crypto';

/** Small byte utilities shared by the archive builders; results are plain Uint8Arrays. */

export type Bytes = Uint8Array | string;

export function bytes(value: Bytes): Uint8Array {
  return typeof value === 'string' ? new TextEncoder().encode(value) : value;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Hex SHA-256, the digest form the upgrader accepts (docs/operations.md#fetch). */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Node helpers hand back Buffers; tests compare with toEqual, so normalise to a plain view. */
export function plain(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}
