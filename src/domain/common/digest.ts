import { fail, ok, type Result } from './failure.js';

/** A SHA-256 digest as 64 lowercase hexadecimal characters. */
export type Sha256 = string & { readonly __brand: 'Sha256' };

const SHA256_HEX = /^[0-9a-f]{64}$/;
const PREFIX = 'sha256:';

/**
 * Parses a user-supplied digest: surrounding whitespace is trimmed, one `sha256:` prefix (any
 * case) is allowed, hex digits may be of either case. Anything else is `E_INVALID_DIGEST`.
 */
export function parseSha256(text: string): Result<Sha256> {
  let body = text.trim();
  if (body.slice(0, PREFIX.length).toLowerCase() === PREFIX) body = body.slice(PREFIX.length);
  const lower = body.toLowerCase();
  if (!SHA256_HEX.test(lower)) {
    return fail(
      'E_INVALID_DIGEST',
      'the SHA-256 digest must be exactly 64 hexadecimal characters, optionally prefixed with "sha256:"',
    );
  }
  return ok(lower as Sha256);
}

/** Parses an optional digest: empty or whitespace-only input means "no digest". */
export function parseOptionalSha256(text: string | undefined): Result<Sha256 | null> {
  if (text === undefined || text.trim() === '') return ok(null);
  return parseSha256(text);
}

/** True for a canonical digest (what adapters produce); used when reading durable files. */
export function isSha256(value: unknown): value is Sha256 {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/** Accepts a canonical digest computed by an adapter; anything else is a programming error. */
export function sha256FromHex(hex: string): Sha256 {
  if (!SHA256_HEX.test(hex)) throw new TypeError('a SHA-256 digest must be 64 lowercase hexadecimal characters');
  return hex as Sha256;
}

export function shortDigest(digest: Sha256): string {
  return digest.slice(0, 12);
}
