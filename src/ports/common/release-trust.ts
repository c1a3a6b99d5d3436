import type { SignedTarget } from '../../domain/common/trust/signed-target.js';

/** What the verified metadata says of one target path. */
export interface TargetLookup {
  /** The target, or null when no role the delegation tree trusts for this path signs it. */
  readonly target: SignedTarget | null;
  /** Whether the trusted root asks for consistent snapshots (targets stored as "<sha256>.<name>"). */
  readonly consistentSnapshot: boolean;
}

/** One role's trusted metadata, for `status` and expiry warnings. */
export interface TrustedRole {
  readonly role: string;
  readonly version: number;
  /** RFC 3339, as signed. */
  readonly expires: string;
}

/**
 * The publisher's signed word on releases (docs/security.md#signed-releases), a TUF client.
 * `lookup` refreshes the metadata first (root chain, timestamp, snapshot, targets, the
 * delegations the path needs) and keeps what it verified; it throws `TrustError`
 * (E_TRUST_METADATA) when the metadata cannot be trusted or fetched. `trusted` reads only what was
 * verified before, without a request.
 */
export interface ReleaseTrust {
  lookup(targetPath: string, signal?: AbortSignal): Promise<TargetLookup>;
  trusted(): Promise<readonly TrustedRole[]>;
}
