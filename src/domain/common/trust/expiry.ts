/** How long before an expiry the upgrader starts to warn: time enough for a publisher to re-sign. */
export const EXPIRY_WARNING_MS = 7 * 24 * 3_600_000;

export interface RoleExpiry {
  readonly role: string;
  /** RFC 3339, as signed. */
  readonly expires: string;
}

/**
 * The roles whose signed metadata expires within the warning window (or already has): once one
 * expires, every update stops with E_TRUST_METADATA until the publisher signs it anew.
 */
export function expiringSoon(roles: readonly RoleExpiry[], nowMs: number): readonly RoleExpiry[] {
  return roles.filter((role) => {
    const expiresMs = Date.parse(role.expires);
    return Number.isNaN(expiresMs) || expiresMs - nowMs <= EXPIRY_WARNING_MS;
  });
}
