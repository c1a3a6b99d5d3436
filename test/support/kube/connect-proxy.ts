// A tiny HTTP CONNECT proxy on 127.0.0.1 that counts its tunnels. It dials loopback only: a
// target host is either a loopback address or a name the test maps (`names`) to 127.0.0.1, so a
// client can be pointed at a server name that resolves nowhere and still reach a loopback server
// through the proxy. Anything else is refused with 403 and never dialled.

import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ConnectProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The `host:port` of every tunnel opened, in order. */
  readonly tunnels: readonly string[];
  /** The Proxy-Authorization header of every CONNECT request (`null`: none). */
  readonly authorizations: readonly (string | null)[];
  close(): Promise<void>;
}

export async function startConnectProxy(names: readonly string[] = []): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const authorizations: (string | null)[] = [];
  const sockets = new Set<Socket>();
  const mapped = new Set(names.map((name) => name.toLowerCase()));
  const server = createServer((_request, response) => {
    response.writeHead(405);
    response.end();
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    authorizations.push(
      typeof request.headers['proxy-authorization'] === 'string' ? request.headers['proxy-authorization'] : null,
    );
    const target = /^\[?([^\]]+?)\]?:(\d+)$/.exec(request.url ?? '');
    const host = target?.[1]?.toLowerCase() ?? '';
    const loopback = host === '127.0.0.1' || host === '::1' || mapped.has(host);
    if (target === null || !loopback) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    tunnels.push(`${host}:${target[2]}`);
    const upstream = connect({ host: host === '::1' ? '::1' : '127.0.0.1', port: Number(target[2]) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
