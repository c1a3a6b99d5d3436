import { fail, ok, type Result } from './failure.js';
import { RedactedUrl } from './redacted-url.js';

/** Operator settings that tighten the MachineOperation contract's permissive defaults. */
export interface SourcePolicy {
  readonly allowHttp: boolean;
  readonly requireDigest: boolean;
}

/** A weakness that is allowed by policy but must be logged as a warning. */
export type SourceWeakness = 'plain-http' | 'no-digest';

export interface AcceptedSource {
  readonly url: RedactedUrl;
  readonly weaknesses: readonly SourceWeakness[];
}

export const URL_TEXT_MAX_LENGTH = 8192;

/**
 * Validates a download URL (docs/operations.md#fetch): http or https only, a host, no userinfo, no
 * fragment, no whitespace or control characters. Messages never repeat the URL, so a secret in it
 * cannot leak through the error.
 */
export function parseDownloadUrl(text: string, policy: SourcePolicy, hasDigest: boolean): Result<AcceptedSource> {
  const trimmed = text.trim();
  if (trimmed === '') return fail('E_INVALID_URL', 'the download URL is empty');
  if (trimmed.length > URL_TEXT_MAX_LENGTH)
    return fail('E_INVALID_URL', `the download URL is longer than ${URL_TEXT_MAX_LENGTH} characters`);
  if (/[\s\p{Cc}]/u.test(trimmed))
    return fail('E_INVALID_URL', 'the download URL contains whitespace or control characters');
  // WHATWG parsing would turn "https:host/x", "https:///host/x" or "https:\\@host" into a URL
  // with a host; the text itself must spell out a non-empty authority.
  if (!/^https?:\/\/[^/\\?#]/i.test(trimmed)) {
    return /^https?:/i.test(trimmed)
      ? fail('E_INVALID_URL', 'the download URL must name a host after "//"')
      : fail('E_INVALID_URL', 'the download URL must use http or https');
  }
  const checked = checkUrlShape(trimmed);
  if (!checked.ok) return checked;
  const url = checked.value;
  const weaknesses: SourceWeakness[] = [];
  if (url.protocol === 'http:') {
    if (!policy.allowHttp)
      return fail('E_INSECURE_SOURCE', 'plain HTTP downloads are disabled by artifact.allowHttp=false');
    weaknesses.push('plain-http');
  }
  if (!hasDigest) {
    if (policy.requireDigest)
      return fail('E_INSECURE_SOURCE', 'a SHA-256 digest is required by artifact.requireDigest=true');
    weaknesses.push('no-digest');
  }
  return ok({ url: RedactedUrl.fromValidated(url), weaknesses });
}

/**
 * Decides whether a redirect from `from` to the `Location` text may be followed: the target must
 * pass the same shape rules, and a download that started on https never continues over http.
 */
export function checkRedirect(from: RedactedUrl, location: string): Result<RedactedUrl> {
  let target: URL;
  try {
    target = new URL(location, from.revealForRequest());
  } catch {
    return fail('E_REDIRECT_REFUSED', `the redirect from ${from.toString()} has an invalid location`);
  }
  const checked = checkUrlShape(target.href, location.includes('#'));
  if (!checked.ok)
    return fail(
      'E_REDIRECT_REFUSED',
      `the redirect from ${from.toString()} leads to a URL that is not allowed: ${checked.failure.message}`,
    );
  if (from.protocol === 'https:' && checked.value.protocol !== 'https:') {
    return fail('E_REDIRECT_REFUSED', `the redirect from ${from.toString()} would downgrade https to http`);
  }
  return ok(RedactedUrl.fromValidated(checked.value));
}

function checkUrlShape(text: string, hadFragment = text.includes('#')): Result<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('E_INVALID_URL', 'the download URL is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return fail('E_INVALID_URL', 'the download URL must use http or https');
  }
  if (url.hostname === '') return fail('E_INVALID_URL', 'the download URL must name a host');
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text)) {
    return fail('E_INVALID_URL', 'the download URL must not contain user information');
  }
  if (hadFragment || url.hash !== '') return fail('E_INVALID_URL', 'the download URL must not contain a fragment');
  return ok(url);
}
