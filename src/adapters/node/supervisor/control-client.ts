import { createConnection } from 'node:net';
import {
  decodeReply,
  encodeLine,
  REPLY_MAX_BYTES,
  type ControlFailure,
  type ControlOp,
  type ControlRequest,
  type ReplyFor,
} from './control-protocol.js';

export type ControlClientErrorKind =
  /** No supervisor listens: the socket file is missing, or nobody accepts on it (ECONNREFUSED). */
  | 'unreachable'
  | 'timeout'
  /** The peer answered something that is not a reply to this request. */
  | 'bad-reply'
  /** Any other socket failure (EACCES on the socket, a reset connection, ...). */
  | 'io';

export class ControlClientError extends Error {
  readonly kind: ControlClientErrorKind;

  constructor(kind: ControlClientErrorKind, message: string) {
    super(message);
    this.name = 'ControlClientError';
    this.kind = kind;
  }
}

/**
 * Sends one request to the supervisor listening on `socketPath` and returns its reply — a
 * failure reply (`ok: false`) is returned, not thrown. Throws ControlClientError when no valid
 * reply arrives within `timeoutMs`. Exported for the CLI and recovery hooks.
 */
export function requestSupervisor<Op extends ControlOp>(
  socketPath: string,
  request: ControlRequest & { readonly op: Op },
  timeoutMs: number,
): Promise<ReplyFor[Op] | ControlFailure> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      outcome();
    };
    const fail = (kind: ControlClientErrorKind, message: string): void =>
      settle(() => reject(new ControlClientError(kind, message)));
    const timer = setTimeout(
      () => fail('timeout', `the supervisor at ${socketPath} did not answer ${request.op} within ${timeoutMs} ms`),
      timeoutMs,
    );
    socket.once('connect', () => socket.write(encodeLine(request)));
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.indexOf(0x0a);
      const kept = newline === -1 ? chunk : chunk.subarray(0, newline);
      chunks.push(kept);
      size += kept.length;
      if (size > REPLY_MAX_BYTES) {
        fail('bad-reply', `the reply from ${socketPath} exceeds ${REPLY_MAX_BYTES} bytes`);
        return;
      }
      if (newline === -1) return;
      const reply = decodeReply<Op>(request.op, Buffer.concat(chunks).toString('utf8'));
      if (reply === null)
        fail('bad-reply', `${socketPath} sent a reply that is not a supervisor's answer to ${request.op}`);
      else settle(() => resolve(reply));
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const unreachable = error.code === 'ENOENT' || error.code === 'ECONNREFUSED';
      fail(
        unreachable ? 'unreachable' : 'io',
        `cannot talk to the supervisor at ${socketPath}: ${error.code ?? error.message}`,
      );
    });
    socket.once('close', () =>
      fail('bad-reply', `the supervisor at ${socketPath} closed the connection without a reply to ${request.op}`),
    );
  });
}
