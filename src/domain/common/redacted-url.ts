/**
 * A download URL that can travel anywhere — logs, errors, status, JSON — without leaking the
 * credentials such URLs often carry (SAS signatures in the query, tokens in userinfo or the
 * fragment). Every printable form shows only scheme, host, port and path. The full text lives
 * in a private field and is handed out only by `revealForRequest()`, which the HTTP adapter
 * calls at the moment it sends the request.
 */
const INSPECT = Symbol.for('nodejs.util.inspect.custom');

export class RedactedUrl {
  readonly #href: string;
  readonly #printable: string;
  readonly protocol: 'http:' | 'https:';
  readonly host: string;

  private constructor(href: string, printable: string, protocol: 'http:' | 'https:', host: string) {
    this.#href = href;
    this.#printable = printable;
    this.protocol = protocol;
    this.host = host;
    Object.freeze(this);
  }

  /** Wraps an already validated absolute http(s) URL; see `parseDownloadUrl` for validation. */
  static fromValidated(url: URL): RedactedUrl {
    const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
    const hadSecret = url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '';
    const printable = `${protocol}//${url.host}${url.pathname}${hadSecret ? ' [query redacted]' : ''}`;
    return new RedactedUrl(url.href, printable, protocol, url.host);
  }

  /** The real URL, for the one place that opens the connection. Never log the result. */
  revealForRequest(): string {
    return this.#href;
  }

  toString(): string {
    return this.#printable;
  }

  toJSON(): string {
    return this.#printable;
  }

  [INSPECT](): string {
    return `RedactedUrl(${this.#printable})`;
  }
}

/**
 * Best-effort redaction of free text that may embed URLs (for example an error message from a
 * transport library): every http(s) URL is cut down to its scheme, host and path.
 */
export function redactUrlsInText(text: string): string {
  // No leading \b: "x_https://…" has no word boundary before the scheme and must still match.
  // The userinfo part runs to the last "@" of the authority, as URL parsers read it, so a
  // password containing "@" is removed whole.
  return text.replace(
    /([a-z][a-z0-9+.-]*:\/\/)([^\s/?#]*@)?([^\s/?#]*)([^\s?#]*)(\?[^\s#]*)?(#\S*)?/gi,
    (_m, scheme: string, user: string | undefined, host: string, path: string, query?: string, hash?: string) => {
      const secret = query !== undefined || hash !== undefined || user !== undefined;
      return `${scheme}${host}${path}${secret ? ' [query redacted]' : ''}`;
    },
  );
}
