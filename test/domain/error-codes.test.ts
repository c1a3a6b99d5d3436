import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  exitCodeFor,
  ExitCode,
  isErrorCode,
  type ErrorCode,
} from '../../src/domain/common/error-codes.js';
import { fail, failure, ok } from '../../src/domain/common/failure.js';

/**
 * Every code the CLI contract requires (docs/operations.md#error-codes), plus the durable-file and
 * I/O codes the domain adds.
 */
const SPEC_CODES = [
  'E_USAGE',
  'E_CONFIG',
  'E_INVALID_URL',
  'E_INSECURE_SOURCE',
  'E_INVALID_DIGEST',
  'E_HTTP_STATUS',
  'E_REDIRECT_REFUSED',
  'E_TOO_MANY_REDIRECTS',
  'E_TIMEOUT',
  'E_TOO_LARGE',
  'E_TRUNCATED',
  'E_TLS',
  'E_DIGEST_MISMATCH',
  'E_ARCHIVE_FORMAT',
  'E_ARCHIVE_MEMBER',
  'E_ARCHIVE_MEMBER_TYPE',
  'E_ARCHIVE_MEMBER_SIZE',
  'E_CANDIDATE_INVALID',
  'E_CANDIDATE_VERSION',
  'E_VERSION_MISMATCH',
  'E_DOWNGRADE_REFUSED',
  'E_QUARANTINED',
  'E_WRONG_ARCH',
  'E_LAYOUT',
  'E_NOT_ROOT',
  'E_LOCK_BUSY',
  'E_UPGRADE_PENDING',
  'E_SERVICE',
  'E_UNHEALTHY',
  'E_CLUSTER',
  'E_DISK_SPACE',
] as const;
const DOMAIN_CODES = [
  'E_RECORD',
  'E_STATE',
  'E_IO',
  'E_NETWORK',
  'E_INTERRUPTED',
  'E_CLUSTER_AUTH',
  'E_NOT_FOUND',
  'E_TRANSITION_REFUSED',
  'E_NO_ROLLBACK_RELEASE',
  'E_UNTRUSTED',
  'E_TRUST_METADATA',
] as const;

describe('ERROR_CODES', () => {
  it('is exactly the specified closed set', () => {
    expect([...ERROR_CODES].sort()).toEqual([...SPEC_CODES, ...DOMAIN_CODES].sort());
  });

  it('has no duplicates', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it.each(ERROR_CODES.map((code) => [code]))('%s is upper-case E_ form', (code) => {
    expect(code).toMatch(/^E_[A-Z]+(_[A-Z]+)*$/);
  });
});

describe('isErrorCode', () => {
  it.each(ERROR_CODES.map((code) => [code]))('%s is a code', (code) => {
    expect(isErrorCode(code)).toBe(true);
  });

  it.each<[unknown]>([
    ['e_usage'],
    ['E_usage'],
    ['E_NOPE'],
    ['E_'],
    [''],
    [' E_USAGE'],
    ['E_USAGE '],
    ['ENOENT'],
    ['toString'],
    ['__proto__'],
    ['constructor'],
    [0],
    [null],
    [undefined],
    [['E_USAGE']],
    [{ code: 'E_USAGE' }],
  ])('%j is not a code', (value) => {
    expect(isErrorCode(value)).toBe(false);
  });
});

describe('ExitCode', () => {
  it('matches docs/protocol.md#exit-codes: 5 for a host changed and then failed, 6 for a watched rollout that halted', () => {
    expect(ExitCode).toEqual({
      ok: 0,
      failedNothingChanged: 1,
      usage: 2,
      rolledBack: 3,
      busy: 4,
      changedThenFailed: 5,
      rolloutHalted: 6,
    });
  });
});

describe('exitCodeFor', () => {
  const expected: Record<ErrorCode, ExitCode> = {
    E_USAGE: 2,
    E_CONFIG: 2,
    E_INVALID_URL: 2,
    E_INVALID_DIGEST: 2,
    E_LOCK_BUSY: 4,
    E_UPGRADE_PENDING: 4,
    E_INSECURE_SOURCE: 2,
    E_HTTP_STATUS: 1,
    E_REDIRECT_REFUSED: 1,
    E_TOO_MANY_REDIRECTS: 1,
    E_TIMEOUT: 1,
    E_TOO_LARGE: 1,
    E_TRUNCATED: 1,
    E_TLS: 1,
    E_DIGEST_MISMATCH: 1,
    E_ARCHIVE_FORMAT: 1,
    E_ARCHIVE_MEMBER: 1,
    E_ARCHIVE_MEMBER_TYPE: 1,
    E_ARCHIVE_MEMBER_SIZE: 1,
    E_CANDIDATE_INVALID: 1,
    E_CANDIDATE_VERSION: 1,
    E_VERSION_MISMATCH: 1,
    E_DOWNGRADE_REFUSED: 1,
    E_QUARANTINED: 1,
    E_WRONG_ARCH: 1,
    E_LAYOUT: 1,
    E_NOT_ROOT: 1,
    E_SERVICE: 1,
    E_UNHEALTHY: 1,
    E_CLUSTER: 1,
    E_DISK_SPACE: 1,
    E_RECORD: 1,
    E_STATE: 1,
    E_IO: 1,
    E_NETWORK: 1,
    E_INTERRUPTED: 1,
    E_CLUSTER_AUTH: 1,
    E_NOT_FOUND: 1,
    E_TRANSITION_REFUSED: 2,
    E_NO_ROLLBACK_RELEASE: 2,
    E_UNTRUSTED: 1,
    E_TRUST_METADATA: 1,
  };

  it('the table covers every code', () => {
    expect(Object.keys(expected).sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each(Object.entries(expected) as [ErrorCode, ExitCode][])('%s → %i', (code, exit) => {
    expect(exitCodeFor(code)).toBe(exit);
  });

  it.each(ERROR_CODES.map((code) => [code]))('%s never maps to success or rolled back', (code) => {
    expect([ExitCode.ok, ExitCode.rolledBack]).not.toContain(exitCodeFor(code));
  });
});

describe('Result helpers', () => {
  it.each<[string, unknown, unknown]>([
    ['ok', ok(5), { ok: true, value: 5 }],
    ['ok null', ok(null), { ok: true, value: null }],
    ['fail', fail('E_IO', 'disk'), { ok: false, failure: { code: 'E_IO', message: 'disk' } }],
    ['failure', failure('E_TLS', 'bad'), { code: 'E_TLS', message: 'bad' }],
  ])('%s', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });
});
