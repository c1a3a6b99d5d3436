// A bearer-token gate on 127.0.0.1 in front of another loopback server (the fake API server,
// which does not authenticate): requests whose `Authorization: Bearer <token>` is among the
// accepted tokens are passed through (watch streams included), every other request is answered
// 401 with a Kubernetes Status, as kube-apiserver answers a token it does not know.

import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface AuthGate {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** The tokens accepted from now on (every other one is answered 401). */
  accept(...tokens: string[]): void;
  /** The bearer token of every request received, in order (`null`: none sent). */
  readonly tokens: readonly (string | null)[];
  /** How many requests were answered 401. */
  readonly refused: number;
  close(): Promise<void>;
}

const UNAUTHORIZED = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
});

export async function startAuthGate(upstream: string, accepted: readonly string[] = []): Promise<AuthGate> {
  let allowed = new Set(accepted);
  const tokens: (string | null)[] = [];
  let refused = 0;
  const sockets = new Set<Socket>();
  const target = new URL(upstream);
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const header = incoming.headers['authorization'];
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : null;
    tokens.push(token);
    if (token === null || !allowed.has(token)) {
      refused += 1;
      outgoing.writeHead(401, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(UNAUTHORIZED),
      });
      outgoing.end(UNAUTHORIZED);
      incoming.resume();
      return;
    }
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    accept: (...next) => {
      allowed = new Set(next);
    },
    tokens,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
