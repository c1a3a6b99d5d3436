import { type AddressInfo, createServer, type Socket } from 'node:net';

/**
 * A TCP listener that accepts and then never reads or writes: no HTTP request is parsed and,
 * for https:// URLs, no TLS handshake ever completes. This is the "stall before headers" case
 * one layer further down, which a header timeout must also cover (catalogue B #20).
 */
export interface BlackHole {
  /** `scheme://127.0.0.1:port/path`; the scheme only changes what the client attempts. */
  url(path: string, scheme?: 'http' | 'https'): string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Idempotent; destroys every held socket. */
  close(): Promise<void>;
}

export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.pause(); // never read: the client's bytes sit in the kernel buffer
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
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
    url: (path, scheme = 'http') => `${scheme}://127.0.0.1:${port}${path}`,
    accepted: () => count,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
