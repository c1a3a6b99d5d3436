import { ClusterError } from '../../../domain/common/port-errors.js';

/**
 * A 429 that said when to come back: still a ClusterError (every caller treats it as one), with
 * the Retry-After a client-side pacer honours.
 */
export class ThrottledError extends ClusterError {
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(429, message);
  }
}

/**
 * The wait a 429 asks for, in milliseconds: the `Retry-After` header in seconds (what client-go
 * reads), else the Status body's `details.retryAfterSeconds` (the API server sends both); `null`
 * when neither says. The HTTP-date form is not read: the API server never sends it, and it would
 * be a wall-clock reading.
 */
export function retryAfterMs(header: string | string[] | undefined, body: unknown): number | null {
  const text = Array.isArray(header) ? header[0] : header;
  if (text !== undefined && /^\s*\d{1,6}\s*$/.test(text)) return Number(text) * 1_000;
  const seconds = (body as { details?: { retryAfterSeconds?: unknown } } | null)?.details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 0 ? seconds * 1_000 : null;
}
