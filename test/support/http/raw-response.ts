import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HeaderMap } from './behaviours.js';

/**
 * Raw HTTP/1.1 response writing. We bypass ServerResponse on purpose: it would reject or fix a
 * lying Content-Length and always frame the body itself. Every response says
 * `Connection: close` so one socket carries one exchange and "end of socket" is unambiguous.
 */

export function responseHead(statusCode: number, headers: HeaderMap): Buffer {
  const lines = [`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? 'Unknown'}`];
  let sawConnection = false;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'connection') sawConnection = true;
    for (const v of typeof value === 'string' ? [value] : value) lines.push(`${name}: ${v}`);
  }
  if (!sawConnection) lines.push('Connection: close');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/** One chunk in chunked transfer-coding. */
export function chunkFrame(piece: Uint8Array): Buffer {
  return Buffer.concat([
    Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'),
    piece,
    Buffer.from('\r\n', 'latin1'),
  ]);
}

export const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/** Resolves when the socket can take more data or is gone, without leaking listeners. */
export function drainedOrClosed(socket: Duplex): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
