import { describe, expect, it } from 'vitest';
import { EXPIRY_WARNING_MS, expiringSoon } from '../../../src/domain/common/trust/expiry.js';

const NOW_MS = Date.parse('2026-12-02T12:00:00Z');
const at = (offsetMs: number): string => new Date(NOW_MS + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('expiringSoon', () => {
  it('names the roles that expire within the warning window, or already have', () => {
    const roles = [
      { role: 'root', expires: at(365 * 86_400_000) },
      { role: 'targets', expires: at(EXPIRY_WARNING_MS) },
      { role: 'snapshot', expires: at(EXPIRY_WARNING_MS + 1_000) },
      { role: 'timestamp', expires: at(-1_000) },
    ];
    expect(expiringSoon(roles, NOW_MS).map((role) => role.role)).toEqual(['targets', 'timestamp']);
  });

  it('treats an expiry it cannot read as expiring', () => {
    expect(expiringSoon([{ role: 'root', expires: 'never' }], NOW_MS)).toHaveLength(1);
  });
});
