/**
 * The closed set of stable error codes (docs/operations.md#error-codes). Every expected failure
 * carries exactly one of these; tests assert on codes, never on message text.
 */
export const ERROR_CODES = [
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
  'E_RECORD',
  'E_STATE',
  'E_IO',
  'E_NETWORK',
  'E_INTERRUPTED',
  'E_CLUSTER_AUTH',
  // Signed releases (docs/security.md#signed-releases): a release the publisher did not sign, and
  // metadata that cannot be trusted.
  'E_UNTRUSTED',
  'E_TRUST_METADATA',
  // The operator CLI of fleet rollouts (`agent-upgrade rollout …`, docs/rollouts.md#the-operator-cli).
  'E_NOT_FOUND',
  'E_TRANSITION_REFUSED',
  'E_NO_ROLLBACK_RELEASE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const known: ReadonlySet<string> = new Set(ERROR_CODES);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && known.has(value);
}

/** CLI exit codes (docs/protocol.md#exit-codes). */
export const ExitCode = {
  ok: 0,
  failedNothingChanged: 1,
  usage: 2,
  rolledBack: 3,
  busy: 4,
  /** The host changed, then a later step failed: the output says what state the node is in. */
  changedThenFailed: 5,
  /** `rollout status --watch`: the rollout halted, and waits for a person. */
  rolloutHalted: 6,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code a failure maps to when nothing was changed on the host. */
export function exitCodeFor(code: ErrorCode): ExitCode {
  switch (code) {
    case 'E_USAGE':
    case 'E_CONFIG':
    case 'E_INVALID_URL':
    case 'E_INVALID_DIGEST':
    case 'E_INSECURE_SOURCE':
    case 'E_TRANSITION_REFUSED':
    case 'E_NO_ROLLBACK_RELEASE':
      return ExitCode.usage;
    case 'E_LOCK_BUSY':
    case 'E_UPGRADE_PENDING':
      return ExitCode.busy;
    default:
      return ExitCode.failedNothingChanged;
  }
}
