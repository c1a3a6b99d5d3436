/**
 * What a hostile route does, as plain data. The server (hostile-server.ts) interprets these by
 * writing raw HTTP/1.1 bytes to the socket, because node's ServerResponse would correct exactly
 * the lies we want to tell (Content-Length mismatches, half-sent bodies, chunked bodies that
 * never end).
 */

export type HeaderMap = Readonly<Record<string, string | readonly string[]>>;

/**
 * How the body length is framed:
 *  - a number: `Content-Length: n`, which may be larger or smaller than the real body (a lie);
 *  - `'omit'`: `Transfer-Encoding: chunked`;
 *  - `'until-close'`: no length at all, the body ends when the server closes the connection.
 */
export type LengthFraming = number | 'omit' | 'until-close';

export type Behaviour =
  | {
      readonly kind: 'serve';
      readonly body: Uint8Array;
      readonly status: number;
      readonly headers: HeaderMap;
      readonly contentLength: LengthFraming;
      readonly contentEncoding: string | undefined;
    }
  | {
      readonly kind: 'truncate';
      readonly body: Uint8Array;
      readonly declaredLength: number;
      readonly sendBytes: number;
    }
  | { readonly kind: 'stall-before-headers' }
  | { readonly kind: 'stall-after'; readonly body: Uint8Array; readonly bytes: number }
  | { readonly kind: 'trickle'; readonly body: Uint8Array; readonly chunkBytes: number; readonly intervalMs: number }
  | { readonly kind: 'redirect'; readonly location: string; readonly status: number }
  | {
      readonly kind: 'endless';
      readonly chunkBytes: number;
      readonly maxBytes: number;
      readonly source: (() => Iterable<Uint8Array>) | undefined;
    }
  | { readonly kind: 'status'; readonly code: number; readonly body: Uint8Array };

export type BodyInput = Uint8Array | string;

export function toBytes(body: BodyInput): Uint8Array {
  return typeof body === 'string' ? new TextEncoder().encode(body) : body;
}

export interface ServeOptions {
  readonly status?: number;
  readonly headers?: HeaderMap;
  /** Defaults to the true body length. */
  readonly contentLength?: LengthFraming;
  /** Sets `Content-Encoding` without transforming the body: the bytes are sent as given. */
  readonly contentEncoding?: string;
}

/** A complete response; `contentLength` may lie. Default status 200, honest length. */
export function serve(body: BodyInput, options: ServeOptions = {}): Behaviour {
  const bytes = toBytes(body);
  return {
    kind: 'serve',
    body: bytes,
    status: options.status ?? 200,
    headers: options.headers ?? {},
    contentLength: options.contentLength ?? bytes.length,
    contentEncoding: options.contentEncoding,
  };
}

/** Declares `declaredLength`, sends the first `sendBytes` of `body`, then destroys the socket. */
export function truncate(body: BodyInput, options: { declaredLength: number; sendBytes: number }): Behaviour {
  return { kind: 'truncate', body: toBytes(body), ...options };
}

/** Accepts the connection and reads the request, then never answers (header-timeout case). */
export function stallBeforeHeaders(): Behaviour {
  return { kind: 'stall-before-headers' };
}

/** Honest headers, then `bytes` of the body, then silence forever (idle-timeout case). */
export function stallAfter(body: BodyInput, bytes: number): Behaviour {
  return { kind: 'stall-after', body: toBytes(body), bytes };
}

/** Honest headers, then `chunkBytes` every `intervalMs` until done (slow-retrieval case). */
export function trickle(body: BodyInput, options: { chunkBytes: number; intervalMs: number }): Behaviour {
  if (options.chunkBytes < 1) throw new RangeError('chunkBytes must be >= 1');
  return { kind: 'trickle', body: toBytes(body), ...options };
}

/** `Location` is sent verbatim: relative, absolute, another server, another scheme. */
export function redirect(location: string, status = 302): Behaviour {
  return { kind: 'redirect', location, status };
}

export interface EndlessOptions {
  readonly chunkBytes: number;
  /**
   * Safety bound: after this many body bytes the socket is destroyed (not ended), so a client
   * that never enforces its cap fails loudly instead of "succeeding" on a huge body. 1 GiB.
   */
  readonly maxBytes?: number;
  /**
   * Where the bytes come from, re-chunked to `chunkBytes`; default zeros. Use for example
   * `endlessGzip()` from test/support/archive so the body stays a valid gzip prefix forever.
   * If the iterable ends, the body ends (terminal chunk) — pass an infinite one for "endless".
   */
  readonly source?: () => Iterable<Uint8Array>;
}

export const ONE_GIB = 1024 ** 3;

/** A 200 chunked body that never ends; stops when the client disconnects. */
export function endless(options: EndlessOptions): Behaviour {
  if (options.chunkBytes < 1) throw new RangeError('chunkBytes must be >= 1');
  return {
    kind: 'endless',
    chunkBytes: options.chunkBytes,
    maxBytes: options.maxBytes ?? ONE_GIB,
    source: options.source,
  };
}

/** A bare status (404, 500, 206, 204, …) with an honest length; 204 and 304 never carry a body. */
export function status(code: number, body: BodyInput = ''): Behaviour {
  return { kind: 'status', code, body: toBytes(body) };
}
