/** One role of the metadata a node verified: what its Node report and `status` show. */
export interface TrustedRoleFact {
  readonly role: string;
  readonly version: number;
  /** RFC 3339, as signed. */
  readonly expires: string;
}

/**
 * The trusted metadata as a Node annotation shows it: compact JSON, one entry per role in the
 * order given (`[{"role":"root","version":1,"expires":"…"},…]`), so a person or a controller
 * reading the Node sees each version and the expiry that would stop this node's updates. Null
 * before anything was verified (nothing to show).
 */
export function trustedMetadataText(roles: readonly TrustedRoleFact[]): string | null {
  if (roles.length === 0) return null;
  return JSON.stringify(roles.map(({ role, version, expires }) => ({ role, version, expires })));
}
