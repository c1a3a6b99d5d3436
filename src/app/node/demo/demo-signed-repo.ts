import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/**
 * The demo's publisher: a TUF 1.0 repository with one ed25519 key for all four roles, signed in
 * memory and served by the demo's release server. Just enough to show a node installing only what
 * was signed; real publishers use a TUF tool (docs/operations.md#publish-a-release).
 */

const SPEC_VERSION = '1.0.31';
const EXPIRES_MS = 365 * 24 * 60 * 60 * 1000;

/** A target as the publisher signs it: the bytes' length and SHA-256, and the release facts. */
export interface DemoTarget {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly version: string;
  readonly arch: string;
}

/** Metadata files by name, as the repository's metadata URL serves them. */
export type DemoMetadata = ReadonlyMap<string, Buffer>;

export class DemoSignedRepo {
  private readonly privateKey: KeyObject;
  private readonly key: Record<string, unknown>;
  private readonly keyId: string;

  constructor(private readonly nowMs: number) {
    const pair = generateKeyPairSync('ed25519');
    this.privateKey = pair.privateKey;
    // The raw 32-byte public key is the tail of its DER (SubjectPublicKeyInfo) encoding.
    const raw = pair.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    this.key = { keytype: 'ed25519', scheme: 'ed25519', keyval: { public: raw.toString('hex') } };
    this.keyId = createHash('sha256').update(canonicalJson(this.key)).digest('hex');
  }

  /** Root, timestamp, snapshot and targets (version 1 each), signing exactly `targets`. */
  publish(targets: readonly DemoTarget[]): DemoMetadata {
    const role = { keyids: [this.keyId], threshold: 1 };
    const root = this.signed('root', {
      consistent_snapshot: false,
      keys: { [this.keyId]: this.key },
      roles: { root: role, timestamp: role, snapshot: role, targets: role },
    });
    const signedTargets = this.signed('targets', {
      targets: Object.fromEntries(
        targets.map((target) => [
          target.path,
          {
            length: target.bytes.length,
            hashes: { sha256: createHash('sha256').update(target.bytes).digest('hex') },
            custom: { version: target.version, arch: target.arch },
          },
        ]),
      ),
    });
    const snapshot = this.signed('snapshot', { meta: { 'targets.json': { version: 1 } } });
    const timestamp = this.signed('timestamp', { meta: { 'snapshot.json': { version: 1 } } });
    return new Map([
      ['1.root.json', root],
      ['timestamp.json', timestamp],
      ['snapshot.json', snapshot],
      ['targets.json', signedTargets],
    ]);
  }

  private signed(type: string, fields: Record<string, unknown>): Buffer {
    const expires = `${new Date(this.nowMs + EXPIRES_MS).toISOString().slice(0, 19)}Z`;
    const body = { _type: type, spec_version: SPEC_VERSION, version: 1, expires, ...fields };
    const sig = sign(null, Buffer.from(canonicalJson(body)), this.privateKey).toString('hex');
    return Buffer.from(`${JSON.stringify({ signatures: [{ keyid: this.keyId, sig }], signed: body }, null, 1)}\n`);
  }
}

/**
 * Canonical JSON as TUF signs it: keys sorted, no whitespace. The demo's metadata holds only
 * integers and printable ASCII strings, for which JSON's own escaping is the canonical one.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
