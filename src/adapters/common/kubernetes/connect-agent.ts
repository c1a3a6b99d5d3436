import { Agent as HttpAgent, request as httpRequest, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

/** How long a proxy may take to open a tunnel. */
export const TUNNEL_TIMEOUT_MS = 30_000;
/** A node's daemon makes a request or two at a time: four connections each are plenty for 10,000 nodes. */
export const SOCKETS_MAX = 4;

export interface AgentSettings {
  readonly secure: boolean;
  readonly keepAlive: boolean;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
  /** Checked against the server's certificate and sent as SNI instead of the server's host. */
  readonly servername?: string;
  /** An http:// proxy: every connection is an HTTP CONNECT tunnel through it. */
  readonly proxy: URL | null;
  /** Connections at most (default SOCKETS_MAX): HTTP/1.1 sends one request at a time on each. */
  readonly maxSockets?: number;
}

type ConnectCallback = (error: Error | null, stream: Duplex) => void;

/** A connection pool to the API server with these TLS settings, directly or through a CONNECT proxy. */
export function createAgent(settings: AgentSettings): HttpAgent {
  const { proxy } = settings;
  if (!settings.secure) {
    const options = { keepAlive: settings.keepAlive, maxSockets: settings.maxSockets ?? SOCKETS_MAX };
    if (proxy === null) return new HttpAgent(options);
    return new (class extends HttpAgent {
      override createConnection(connect: ClientRequestArgs, done: ConnectCallback): undefined {
        openTunnel(proxy, connect).then(
          (socket) => done(null, socket),
          (error: Error) => done(error, undefined as never),
        );
        return undefined;
      }
    })(options);
  }
  const options = {
    keepAlive: settings.keepAlive,
    maxSockets: settings.maxSockets ?? SOCKETS_MAX,
    rejectUnauthorized: settings.rejectUnauthorized,
    ...(settings.ca === undefined ? {} : { ca: settings.ca }),
    ...(settings.cert === undefined ? {} : { cert: settings.cert }),
    ...(settings.key === undefined ? {} : { key: settings.key }),
    ...(settings.servername === undefined ? {} : { servername: settings.servername }),
  };
  if (proxy === null) return new HttpsAgent(options);
  return new (class extends HttpsAgent {
    override createConnection(connect: ClientRequestArgs, done: ConnectCallback): undefined {
      openTunnel(proxy, connect).then(
        (socket) => {
          const host = connect.host ?? '';
          // The TLS session runs inside the tunnel, end to end with the API server: the proxy sees bytes only.
          const tls: ConnectionOptions = {
            ...(connect as ConnectionOptions),
            socket,
            servername: settings.servername ?? (isIP(host) === 0 ? host : ''),
          };
          done(null, tlsConnect(tls));
        },
        (error: Error) => done(error, undefined as never),
      );
      return undefined;
    }
  })(options);
}

/** An HTTP CONNECT tunnel to the request's host and port through `proxy`. */
function openTunnel(proxy: URL, connect: ClientRequestArgs): Promise<Socket> {
  const host = connect.host ?? connect.hostname ?? 'localhost';
  const port = Number(connect.port);
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  const user = decodeURIComponent(proxy.username);
  const credentials = user === '' ? null : `${user}:${decodeURIComponent(proxy.password)}`;
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxy.port === '' ? 80 : Number(proxy.port),
      method: 'CONNECT',
      path: target,
      agent: false,
      timeout: TUNNEL_TIMEOUT_MS,
      headers: {
        host: target,
        ...(credentials === null
          ? {}
          : { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` }),
      },
    });
    request.once('connect', (response, socket, head) => {
      socket.setTimeout(0);
      if (response.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`the proxy ${proxy.host} refused the tunnel to ${target} (${response.statusCode ?? 0})`));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    request.once('timeout', () =>
      request.destroy(new Error(`the proxy ${proxy.host} opened no tunnel within ${TUNNEL_TIMEOUT_MS} ms`)),
    );
    request.once('error', (error) => reject(new Error(`the proxy ${proxy.host} cannot be reached: ${error.message}`)));
    request.end();
  });
}
