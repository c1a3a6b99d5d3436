import { fail, ok, type Result } from '../../common/failure.js';
import { RedactedUrl } from '../../common/redacted-url.js';

/**
 * What one attempt of the health probe reaches (config `health.probe`, docs/configuration.md#health).
 * The vocabulary is Kubernetes': an exec probe succeeds when its program exits 0, an HTTP probe
 * when the status is 200–399.
 */
export type ProbeTarget =
  /** A program run without a shell, `command[0]` an absolute path, the rest its arguments. */
  | { readonly kind: 'exec'; readonly command: readonly string[] }
  /** An HTTP GET to a loopback host; the URL may carry a secret, so it is held redacted. */
  | { readonly kind: 'http'; readonly url: RedactedUrl }
  /** An HTTP GET over a unix socket: `path` is the request's path (and query). */
  | { readonly kind: 'unix-http'; readonly socket: string; readonly path: string };

export interface ProbeSettings {
  readonly target: ProbeTarget;
  /** From the start of one attempt to the start of the next (an attempt never overlaps another). */
  readonly periodMs: number;
  /** One attempt's bound; the probe's whole run is bounded by `health.timeoutMs` as well. */
  readonly timeoutMs: number;
  /** Successes in a row that prove the agent healthy. */
  readonly successThreshold: number;
  /** Failures in a row that prove it unhealthy. */
  readonly failureThreshold: number;
}

/**
 * Defaults sized for an upgrade gate rather than Kubernetes' steady-state 10 s period: a verdict
 * within seconds of the agent becoming stable, and three failures in a row before rolling back,
 * so one slow answer from an agent that is still warming up does not cost the upgrade.
 */
export const PROBE_DEFAULTS = { periodMs: 1_000, timeoutMs: 1_000, successThreshold: 1, failureThreshold: 3 } as const;

/** Why one attempt failed, as a stable code; tests and callers branch on it, never on the text. */
export type ProbeFailureCause =
  | 'exit-status'
  | 'signalled'
  | 'spawn-failed'
  | 'http-status'
  | 'bad-response'
  | 'connection-failed'
  | 'timed-out'
  | 'not-loopback'
  | 'interrupted'
  | 'unavailable';

/** One attempt's result. `reason` is short, carries no URL and no output of the probe. */
export type ProbeOutcome =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'failed'; readonly cause: ProbeFailureCause; readonly reason: string };

export function probeFailed(cause: ProbeFailureCause, reason: string): ProbeOutcome {
  return { kind: 'failed', cause, reason };
}

/** Longest probe URL or request path accepted: a health endpoint needs little. */
export const PROBE_URL_MAX_LENGTH = 2048;

/**
 * Whether a URL's hostname is this machine's loopback: `localhost`, 127.0.0.0/8 or `[::1]`. The
 * WHATWG parser has already normalised the spellings (`127.1`, `0x7f.0.0.1`, `LOCALHOST.`).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host === '[::1]' || host === '::1') return true;
  return isLoopbackIpv4(host);
}

/** An IPv4 address in 127.0.0.0/8, in dotted-decimal form (a resolved address, or a URL's host). */
export function isLoopbackIpv4(address: string): boolean {
  const parts = address.split('.');
  if (parts.length !== 4 || parts[0] !== '127') return false;
  return parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255);
}

/** A resolved address (IPv4 or IPv6 text) that is loopback, e.g. the answer for `localhost`. */
export function isLoopbackAddress(address: string): boolean {
  const lower = address.toLowerCase();
  if (lower === '::1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return isLoopbackIpv4(mapped?.[1] ?? lower);
}

/**
 * Checks a probe URL: plain `http` (a loopback endpoint needs no TLS), a loopback host, no user
 * information or fragment. A query is allowed and kept out of every printable form. Messages
 * never repeat the URL.
 */
export function parseProbeUrl(text: string): Result<RedactedUrl> {
  if (text.length > PROBE_URL_MAX_LENGTH) return fail('E_CONFIG', `must be at most ${PROBE_URL_MAX_LENGTH} characters`);
  if (/[\s\p{Cc}]/u.test(text)) return fail('E_CONFIG', 'must not contain whitespace or control characters');
  if (!/^http:\/\/[^/\\?#]/i.test(text)) return fail('E_CONFIG', 'must be an absolute http:// URL naming a host');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('E_CONFIG', 'is not a valid absolute URL');
  }
  if (url.username !== '' || url.password !== '' || /^http:\/\/[^/?#]*@/i.test(text))
    return fail('E_CONFIG', 'must not contain user information');
  if (text.includes('#')) return fail('E_CONFIG', 'must not contain a fragment');
  if (!isLoopbackHost(url.hostname))
    return fail('E_CONFIG', 'must name a loopback host (localhost, 127.0.0.0/8 or [::1])');
  return ok(RedactedUrl.fromValidated(url));
}

/** Checks the request path of a unix-socket probe: absolute, printable, bounded. */
export function probePathProblem(path: string): string | null {
  if (path.length > PROBE_URL_MAX_LENGTH) return `must be at most ${PROBE_URL_MAX_LENGTH} characters`;
  if (!path.startsWith('/')) return 'must start with "/"';
  if (/[\s\p{Cc}#]/u.test(path)) return 'must not contain whitespace, control characters or "#"';
  return null;
}

/** How a target is named in a log line: no URL query, no request query, no arguments. */
export function describeProbeTarget(target: ProbeTarget): string {
  switch (target.kind) {
    case 'exec':
      return `exec ${target.command[0] ?? ''}`;
    case 'http':
      return `GET ${target.url.toString()}`;
    case 'unix-http':
      return `GET unix:${target.socket}:${target.path.replace(/\?.*$/, '')}`;
  }
}
