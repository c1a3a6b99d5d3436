import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Behaviour, type HeaderMap, serve } from './behaviours.js';
import { chunkFrame, drainedOrClosed, LAST_CHUNK, responseHead } from './raw-response.js';
import { type CertVariant, type TlsMaterial, tlsMaterial } from './tls-material.js';

export * from './behaviours.js';
export { type CertVariant, type TlsMaterial, tlsMaterial } from './tls-material.js';

export interface RecordedRequest {
  readonly method: string;
  /** Path including the query string, exactly as received. */
  readonly path: string;
  /** Lower-cased, as node parses them (for `accept-encoding: identity` etc.). */
  readonly headers: IncomingHttpHeaders;
  /** Name/value pairs in wire order and case, for duplicate or casing assertions. */
  readonly rawHeaders: readonly string[];
}

export interface HostileServerOptions {
  readonly tls?: boolean;
  /** Only with `tls`: which certificate to present (default `valid`). */
  readonly certificate?: CertVariant;
}

export interface HostileServer {
  /** `http://127.0.0.1:port` or `https://127.0.0.1:port`. */
  readonly origin: string;
  /** The material the server presents (undefined for plain http); pass `tls.caPem` as `ca`. */
  readonly tls: TlsMaterial | undefined;
  /** Absolute URL for `path` (which must start with `/`; may carry a query). */
  url(path: string): string;
  /** Later routes replace earlier ones. Matched on the full path+query first, then on the path. */
  route(path: string, behaviour: Behaviour): void;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Sockets currently open: lets a test assert the client hung up after aborting. */
  openConnections(): number;
  /** Idempotent. Destroys every socket (stalled ones included), cancels timers, stops listening. */
  close(): Promise<void>;
}

const NOT_FOUND = serve('no route', { status: 404 });

export async function startHostileServer(options: HostileServerOptions = {}): Promise<HostileServer> {
  const material = options.tls ? await tlsMaterial(options.certificate ?? 'valid') : undefined;
  const server: Server = material
    ? createHttpsServer({ key: material.keyPem, cert: material.certPem })
    : createHttpServer();
  const routes = new Map<string, Behaviour>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;

  // Track raw TCP sockets (for https too: destroying the TCP socket tears down the TLS one).
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that resets mid-body must not surface as an unhandled error in the test run.
    socket.on('error', () => undefined);
  });

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  server.on('request', (req: IncomingMessage) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? '', path, headers: req.headers, rawHeaders: req.rawHeaders });
    const behaviour = routes.get(path) ?? routes.get(path.split('?')[0] ?? path) ?? NOT_FOUND;
    req.resume(); // drain any request body so it cannot stall the parser
    respond(req.socket, behaviour, req.method === 'HEAD', later, () => closing !== undefined);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `${material ? 'https' : 'http'}://127.0.0.1:${port}`;

  return {
    origin,
    tls: material,
    url: (path) => {
      if (!path.startsWith('/')) throw new Error(`path must start with "/": ${path}`);
      return origin + path;
    },
    route: (path, behaviour) => void routes.set(path, behaviour),
    requests,
    openConnections: () => sockets.size,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

type Later = (ms: number, fn: () => void) => void;

function respond(socket: Duplex, b: Behaviour, isHead: boolean, later: Later, closing: () => boolean): void {
  const body = (bytes: Uint8Array): Uint8Array => (isHead ? new Uint8Array(0) : bytes);
  switch (b.kind) {
    case 'serve': {
      const headers: Record<string, string | readonly string[]> = { ...b.headers };
      if (b.contentEncoding !== undefined) headers['Content-Encoding'] = b.contentEncoding;
      if (typeof b.contentLength === 'number') headers['Content-Length'] = String(b.contentLength);
      if (b.contentLength === 'omit') {
        headers['Transfer-Encoding'] = 'chunked';
        const framed = b.body.length > 0 ? [chunkFrame(b.body), LAST_CHUNK] : [LAST_CHUNK];
        socket.end(Buffer.concat([responseHead(b.status, headers), ...(isHead ? [] : framed)]));
        return;
      }
      // Whatever the declared length, send the real body and close: a longer declaration makes
      // the client see a premature close, a shorter one leaves surplus bytes after the message.
      socket.end(Buffer.concat([responseHead(b.status, headers), body(b.body)]));
      return;
    }
    case 'status': {
      const noBody = b.code === 204 || b.code === 304;
      const headers: HeaderMap = noBody
        ? {}
        : { 'Content-Length': String(b.body.length), 'Content-Type': 'text/plain' };
      socket.end(Buffer.concat([responseHead(b.code, headers), noBody ? new Uint8Array(0) : body(b.body)]));
      return;
    }
    case 'redirect':
      socket.end(responseHead(b.status, { Location: b.location, 'Content-Length': '0' }));
      return;
    case 'truncate': {
      const head = responseHead(200, { 'Content-Length': String(b.declaredLength) });
      // Destroy only once the partial body is flushed, so the client really sees those bytes.
      socket.write(Buffer.concat([head, b.body.subarray(0, b.sendBytes)]), () => socket.destroy());
      return;
    }
    case 'stall-before-headers':
      return; // the socket stays open until the client gives up or close() destroys it
    case 'stall-after':
      socket.write(
        Buffer.concat([responseHead(200, { 'Content-Length': String(b.body.length) }), b.body.subarray(0, b.bytes)]),
      );
      return;
    case 'trickle': {
      socket.write(responseHead(200, { 'Content-Length': String(b.body.length) }));
      let offset = 0;
      const tick = (): void => {
        if (socket.destroyed || closing()) return;
        const piece = b.body.subarray(offset, offset + b.chunkBytes);
        offset += piece.length;
        if (offset >= b.body.length) socket.end(piece);
        else {
          socket.write(piece);
          later(b.intervalMs, tick);
        }
      };
      later(b.intervalMs, tick);
      return;
    }
    case 'endless':
      void pumpEndless(socket, b, closing);
      return;
  }
}

function* zeros(chunkBytes: number): Generator<Uint8Array> {
  const chunk = new Uint8Array(chunkBytes);
  for (;;) yield chunk;
}

async function pumpEndless(
  socket: Duplex,
  b: Extract<Behaviour, { kind: 'endless' }>,
  closing: () => boolean,
): Promise<void> {
  socket.write(responseHead(200, { 'Transfer-Encoding': 'chunked', 'Content-Type': 'application/octet-stream' }));
  let sent = 0;
  for (const piece of b.source ? b.source() : zeros(b.chunkBytes)) {
    for (let at = 0; at < piece.length; at += b.chunkBytes) {
      if (socket.destroyed || closing()) return; // client hung up: stop generating
      const slice = piece.subarray(at, at + b.chunkBytes);
      if (sent + slice.length > b.maxBytes) {
        socket.destroy(); // safety bound reached: fail the client loudly rather than end cleanly
        return;
      }
      sent += slice.length;
      if (!socket.write(chunkFrame(slice))) await drainedOrClosed(socket);
    }
  }
  socket.end(LAST_CHUNK);
}
