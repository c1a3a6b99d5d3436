import { chmodSync, lstatSync, mkdirSync, unlinkSync, type Stats } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import {
  controlFailure,
  decodeRequest,
  encodeLine,
  REQUEST_MAX_BYTES,
  type ControlReply,
  type ControlRequest,
} from './control-protocol.js';
import { SupervisorError } from './supervisor-error.js';

/** How long a client may take to send its request line. */
export const CONTROL_READ_TIMEOUT_MS = 5000;

/** How long probing an existing socket file for a live supervisor may take. */
const PROBE_TIMEOUT_MS = 2000;

/** Enough for an operator, a recovery hook and a health poll at once; more is a runaway client. */
const MAX_CONNECTIONS = 32;

export type ControlHandler = (request: ControlRequest) => Promise<ControlReply>;

export interface ControlServerOptions {
  readonly socketPath: string;
  readonly handler: ControlHandler;
  readonly readTimeoutMs?: number;
}

/**
 * The supervisor's control socket: created mode 0600 (only root, or the supervisor's user, may
 * restart the agent), one request and one reply per connection. A socket file left by a dead
 * supervisor is replaced; a live one is never taken over.
 */
export class ControlServer {
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly server: Server,
    private readonly socketPath: string,
    private readonly socketIdentity: Stats,
    private readonly connections: ReadonlySet<Socket>,
  ) {}

  static async listen(options: ControlServerOptions): Promise<ControlServer> {
    const { socketPath } = options;
    mkdirSync(dirname(socketPath), { recursive: true, mode: 0o755 });
    await clearStaleSocket(socketPath);
    const readTimeoutMs = options.readTimeoutMs ?? CONTROL_READ_TIMEOUT_MS;
    const connections = new Set<Socket>();
    // allowHalfOpen: a client may shut down its sending side after the request and still
    // receive the reply (`printf ... | nc -U -N`).
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
      serveConnection(socket, options.handler, readTimeoutMs);
    });
    server.maxConnections = MAX_CONNECTIONS;
    await bindPrivately(server, socketPath);
    return new ControlServer(server, socketPath, lstatSync(socketPath), connections);
  }

  /** Stops accepting, drops open connections and removes the socket file (if still ours). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.connections) socket.destroy();
    }).then(() => this.removeSocketFile());
    return this.closing;
  }

  private removeSocketFile(): void {
    try {
      const now = lstatSync(this.socketPath);
      // Node removes the file itself on close; remove it only if it is still the one we bound.
      if (now.ino === this.socketIdentity.ino && now.dev === this.socketIdentity.dev) unlinkSync(this.socketPath);
    } catch {
      // Already gone.
    }
  }
}

/**
 * Binds with umask 0177, so the socket exists with mode 0600 from the first instant (a chmod
 * after bind would leave a window in which anyone could connect). Node binds a Unix socket
 * synchronously inside listen(), so the process-wide umask is changed only for that call.
 */
async function bindPrivately(server: Server, socketPath: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(
        error.code === 'EADDRINUSE'
          ? new SupervisorError('already-running', `another supervisor bound ${socketPath} at the same time`)
          : new SupervisorError('socket-failed', `cannot listen on ${socketPath}: ${error.code ?? error.message}`),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    let previousUmask: number | null = null;
    try {
      previousUmask = process.umask(0o177);
    } catch {
      // A worker thread may not change the umask; the chmod below then narrows the mode.
    }
    try {
      server.listen(socketPath);
    } finally {
      if (previousUmask !== null) process.umask(previousUmask);
    }
  });
  // Belt and braces: the mode is what operators rely on, so set it explicitly too.
  chmodSync(socketPath, 0o600);
}

/**
 * Leaves `socketPath` free to bind: removes the socket file of a dead supervisor, refuses when a
 * live one answers, and never deletes anything that is not a socket.
 */
async function clearStaleSocket(socketPath: string): Promise<void> {
  let stat: Stats;
  try {
    stat = lstatSync(socketPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new SupervisorError(
      'socket-failed',
      `cannot inspect ${socketPath}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  if (!stat.isSocket())
    throw new SupervisorError(
      'socket-path-occupied',
      `${socketPath} exists and is not a socket; refusing to replace it`,
    );
  const probe = await probeSocket(socketPath);
  if (probe === 'live')
    throw new SupervisorError('already-running', `another supervisor is listening on ${socketPath}`);
  if (probe === 'stale') unlinkSync(socketPath);
}

/** 'live' when something accepts a connection (or the probe cannot tell: refusing is safer). */
function probeSocket(socketPath: string): Promise<'live' | 'stale' | 'absent'> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    const done = (verdict: 'live' | 'stale' | 'absent'): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => done('live'), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done('live'));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') done('stale');
      else if (error.code === 'ENOENT') done('absent');
      else done('live');
    });
  });
}

/** Reads one bounded request line within the read timeout, answers it and closes. */
function serveConnection(socket: Socket, handler: ControlHandler, readTimeoutMs: number): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let received = false;
  socket.on('error', () => {
    // The client went away; there is nobody to answer.
  });
  socket.setTimeout(readTimeoutMs, () => {
    if (!received) socket.destroy();
  });
  // Destroyed once the reply is flushed: a client that never closes its side must not hold a
  // connection slot (a Unix socket still delivers what was written before the close).
  const answer = (reply: ControlReply): void => {
    socket.end(encodeLine(reply), () => socket.destroy());
  };
  const dispatch = (line: string): void => {
    received = true;
    socket.setTimeout(0);
    socket.pause();
    const decoded = decodeRequest(line);
    if (!decoded.ok) {
      answer(decoded);
      return;
    }
    handler(decoded.request).then(answer, (error: unknown) =>
      answer(controlFailure('internal', error instanceof Error ? error.message : String(error))),
    );
  };
  socket.on('data', (chunk: Buffer) => {
    if (received) return;
    const newline = chunk.indexOf(0x0a);
    const kept = newline === -1 ? chunk : chunk.subarray(0, newline);
    chunks.push(kept);
    size += kept.length;
    if (size > REQUEST_MAX_BYTES) {
      received = true;
      answer(controlFailure('request-too-large', `a request line may have at most ${REQUEST_MAX_BYTES} bytes`));
      return;
    }
    if (newline !== -1) dispatch(Buffer.concat(chunks).toString('utf8'));
  });
  // A client that half-closes without a newline still sent a whole request.
  socket.once('end', () => {
    if (received) return;
    if (size === 0) socket.destroy();
    else dispatch(Buffer.concat(chunks).toString('utf8'));
  });
}
