import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the server exposes on `/metrics`: PrometheusMetrics is one. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

export interface MetricsServerOptions {
  readonly host: string;
  /** 0 picks a free port; `address.port` says which. */
  readonly port: number;
  readonly metrics: MetricsSource;
  /** Asked on every `/readyz`; a throw counts as not ready. */
  readonly ready: () => boolean;
}

export interface MetricsServer {
  /** Where it listens: the bound address and the actual port. */
  readonly address: { readonly host: string; readonly port: number };
  /** Stops listening, destroys every open connection and resolves once the server is closed. */
  close(): Promise<void>;
}

/** The server could not listen; `code` is the system's (EADDRINUSE, EACCES, …). */
export class MetricsServerListenError extends Error {
  override readonly name = 'MetricsServerListenError';

  constructor(
    message: string,
    readonly code: string | undefined,
    options: { readonly cause: unknown },
  ) {
    super(message, options);
  }
}

const TEXT = 'text/plain; charset=utf-8';

/** Serves `/metrics`, `/healthz` and `/readyz` (GET only) until closed. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    respond(request, response, options).catch(() => send(response, 500, TEXT, 'internal error'));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listen(server, options.host, options.port);
  // Once listening, an 'error' (a failed accept) must not go unhandled and end the process:
  // the server keeps serving the connections it can.
  server.on('error', () => undefined);
  const bound = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    address: { host: bound.address, port: bound.port },
    close() {
      closing ??= closeServer(server, sockets);
      return closing;
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(
        new MetricsServerListenError(`metrics server cannot listen on ${host}:${port}: ${error.message}`, error.code, {
          cause: error,
        }),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    // close() waits for every connection to end; a scraper's keep-alive connection would hold
    // it open, so they are destroyed rather than waited for.
    server.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
}

async function respond(
  request: IncomingMessage,
  response: ServerResponse,
  options: MetricsServerOptions,
): Promise<void> {
  const path = pathOf(request.url);
  if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') {
    send(response, 404, TEXT, 'not found');
  } else if (request.method !== 'GET') {
    response.setHeader('Allow', 'GET');
    send(response, 405, TEXT, 'method not allowed');
  } else if (path === '/metrics') {
    await sendMetrics(response, options.metrics);
  } else if (path === '/healthz') {
    send(response, 200, TEXT, 'ok');
  } else if (isReady(options.ready)) {
    send(response, 200, TEXT, 'ok');
  } else {
    send(response, 503, TEXT, 'not ready');
  }
}

async function sendMetrics(response: ServerResponse, metrics: MetricsSource): Promise<void> {
  let body: string;
  try {
    body = await metrics.render();
  } catch {
    send(response, 500, TEXT, 'metrics unavailable');
    return;
  }
  send(response, 200, metrics.contentType, body);
}

/** The path without the query; '' (not found) for a target that is no URL. */
function pathOf(target: string | undefined): string {
  try {
    return new URL(target ?? '/', 'http://metrics.invalid').pathname;
  } catch {
    return '';
  }
}

function isReady(ready: () => boolean): boolean {
  try {
    return ready();
  } catch {
    return false;
  }
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  // The connection may have been destroyed by close() while the metrics were rendered.
  if (response.destroyed || response.headersSent) return;
  response.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  response.end(body);
}
