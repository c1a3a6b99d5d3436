import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * A minimal forward proxy, enough to prove HTTP_PROXY / HTTPS_PROXY are honoured:
 *  - absolute-URI requests (`GET http://host:port/path`) for http:// targets;
 *  - `CONNECT host:port` tunnels for https:// targets (the proxy never sees plaintext).
 * It only forwards to loopback, so a misconfigured test can never reach the network.
 */

export interface ProxiedRequest {
  readonly method: string;
  /** The request target as sent: an absolute URI, or `host:port` for CONNECT. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

export interface ForwardProxy {
  /** `http://127.0.0.1:port`, suitable for HTTP_PROXY and HTTPS_PROXY. */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Idempotent; destroys client and upstream sockets, open tunnels included. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
// Hop-by-hop headers (RFC 9110 §7.6.1) and proxy credentials must not travel upstream.
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

export async function startForwardProxy(): Promise<ForwardProxy> {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Duplex>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined); // resets from either side are expected in hostile tests
  };
  const server = createServer();
  server.on('connection', track);
  server.on('request', (req, res) => {
    requests.push({ method: req.method ?? '', target: req.url ?? '', headers: req.headers });
    forward(req, res, track);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    requests.push({ method: 'CONNECT', target: req.url ?? '', headers: req.headers });
    tunnel(req, client, head, track);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}

/** Forwards an absolute-URI request to a loopback http:// target. */
function forward(req: IncomingMessage, res: ServerResponse, track: (s: Duplex) => void): void {
  const target = req.url ?? '';
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    res.writeHead(400).end('proxy expects an absolute URI');
    return;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) {
    res.writeHead(403).end('test proxy forwards to loopback http only');
    return;
  }
  const headers: OutgoingHttpHeaders = { ...req.headers };
  for (const h of HOP_BY_HOP) delete headers[h];
  const upstream = httpRequest(
    {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || 80,
      method: req.method,
      path: url.pathname + url.search,
      headers,
      agent: false,
    },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.rawHeaders);
      up.pipe(res);
      // Upstream truncation must reach the client as truncation, not as a clean end.
      up.on('aborted', () => res.destroy());
      up.on('error', () => res.destroy());
    },
  );
  upstream.on('socket', track);
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
  req.pipe(upstream);
}

/** Opens a CONNECT tunnel to a loopback `host:port`. */
function tunnel(req: IncomingMessage, client: Socket, head: Buffer, track: (s: Duplex) => void): void {
  const target = req.url ?? '';
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
  const host = match?.[1]?.replace(/^\[|\]$/g, '');
  if (!match || host === undefined || !LOOPBACK.has(host)) {
    client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
    return;
  }
  const upstream = connect(Number(match[2]), host, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  track(upstream);
  upstream.on('error', () => client.destroy());
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
}
