// Checks on TUF metadata as it lies on disk, with node:crypto only: the canonical JSON a
// signature covers, and which keys' ed25519 signatures verify. For tests about the repository
// itself; the client under test does its own verification.

import { createPublicKey, verify } from 'node:crypto';
import type { TufMetadata } from './tuf-repo-tool.js';

/**
 * The canonical JSON (securesystemslib's, as TUF signs): keys sorted, no whitespace, integers
 * only. Strings go through JSON.stringify, which matches for the ASCII TUF metadata holds
 * (canonical JSON escapes only `"` and `\`; JSON.stringify also escapes control characters).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isInteger(value)) throw new Error(`canonical JSON has no floats: ${value}`);
  return JSON.stringify(value);
}

/** A key as root or a delegation lists it. */
export interface TufKey {
  readonly keytype: string;
  readonly scheme: string;
  readonly keyval: { readonly public: string };
}

/**
 * The keyids whose signature on `metadata` verifies against `keys` (a root's `signed.keys` or a
 * delegation's `keys`), each counted once, as a client counts toward a threshold.
 */
export function validSignatures(metadata: TufMetadata, keys: Readonly<Record<string, TufKey>>): string[] {
  const payload = Buffer.from(canonicalJson(metadata.signed));
  const valid = new Set<string>();
  for (const { keyid, sig } of metadata.signatures) {
    const key = keys[keyid];
    if (key?.keytype !== 'ed25519' || key.scheme !== 'ed25519') continue;
    const publicKey = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.keyval.public, 'hex').toString('base64url') },
      format: 'jwk',
    });
    if (verify(null, payload, publicKey, Buffer.from(sig, 'hex'))) valid.add(keyid);
  }
  return [...valid];
}
