import { fail, ok, type Result } from '../failure.js';

/** A release URL read against the trusted bases: which base it lies under, and the target it names. */
export interface LocatedTarget {
  readonly base: string;
  /** The TUF target path: the URL's path after the base, decoded, segments joined by "/". */
  readonly targetPath: string;
}

/**
 * With signed releases on, a release URL must lie under the targets URL or a mirror; the rest of
 * its path is the target path the signed metadata must describe. The query (a SAS signature, say)
 * stays with the request and is not part of the target. Messages name no URL: it may carry a secret.
 */
export function locateTarget(urlText: string, bases: readonly string[]): Result<LocatedTarget> {
  const url = parse(urlText);
  if (url === null) return fail('E_INVALID_URL', 'the release URL is not a valid absolute URL');
  for (const baseText of bases) {
    const base = parse(baseText);
    if (base === null || base.origin !== url.origin || !url.pathname.startsWith(base.pathname)) continue;
    const segments = url.pathname.slice(base.pathname.length).split('/');
    const decoded = segments.map(decodeSegment);
    if (decoded.some((segment) => segment === null))
      return fail('E_UNTRUSTED', 'the release URL names no target: an empty, "." or ".." segment, or a bad escape');
    return ok({ base: baseText, targetPath: decoded.join('/') });
  }
  return fail('E_UNTRUSTED', 'the release URL lies under neither the trusted targets URL nor a mirror (trust section)');
}

/**
 * The URL the signed bytes are fetched from: with consistent snapshots the repository stores a
 * target as "<sha256>.<name>" in its directory (TUF 1.0 §5.7.3), so the file a digest names is
 * the only file that can be served for it. The release URL's query is kept.
 */
export function signedDownloadUrl(urlText: string, sha256: string, consistentSnapshot: boolean): string {
  if (!consistentSnapshot) return urlText;
  const url = new URL(urlText);
  const slash = url.pathname.lastIndexOf('/');
  url.pathname = `${url.pathname.slice(0, slash + 1)}${sha256}.${url.pathname.slice(slash + 1)}`;
  return url.href;
}

function parse(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function decodeSegment(segment: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return null;
  }
  if (decoded === '' || decoded === '.' || decoded === '..' || decoded.includes('/')) return null;
  return decoded;
}
