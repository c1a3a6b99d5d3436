import type { ErrorCode } from '../../../domain/common/error-codes.js';
import { ArtifactError } from '../../../domain/common/port-errors.js';
import type { RedactedUrl } from '../../../domain/common/redacted-url.js';

const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|HOSTNAME|ALTNAME/;
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ERR_SOCKET_CLOSED',
  'EPROTO',
]);

export type AbortCause = 'deadline' | 'header-timeout' | 'cancelled' | null;

/**
 * The one place transport failures become ArtifactErrors. The message is rebuilt from the
 * redacted URL and a fixed phrase: a library's own message may quote the full URL, a redirect
 * target or a proxy credential, so it is never passed on.
 */
export function transportError(error: unknown, url: RedactedUrl, abortCause: AbortCause): ArtifactError {
  if (error instanceof ArtifactError) return error;
  if (abortCause === 'deadline') return failure('E_TIMEOUT', url, 'the total download deadline passed');
  if (abortCause === 'header-timeout') return failure('E_TIMEOUT', url, 'the server sent no response headers in time');
  // The caller's signal: an operator's interrupt or a daemon stopping, not a slow server.
  if (abortCause === 'cancelled') return failure('E_INTERRUPTED', url, 'the download was interrupted');
  const code = codeOf(error);
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') return failure('E_TIMEOUT', url, 'the connection timed out');
  if (
    code === 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED' ||
    (code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(messageOf(error)))
  ) {
    return failure('E_TOO_LARGE', url, 'the response is larger than allowed');
  }
  if (code !== null && TLS_CODE.test(code)) return failure('E_TLS', url, `the TLS connection was refused (${code})`);
  if (code !== null && NETWORK_CODES.has(code)) return failure('E_NETWORK', url, `the connection failed (${code})`);
  return failure('E_NETWORK', url, 'the request failed');
}

export function failure(
  code: ErrorCode,
  url: RedactedUrl,
  reason: string,
  httpStatus: number | null = null,
): ArtifactError {
  return new ArtifactError(code, `download from ${url.toString()} failed: ${reason}`, httpStatus);
}

function codeOf(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const direct = (error as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined || cause === error ? null : codeOf(cause);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : '';
}
