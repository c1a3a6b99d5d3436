import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request, type IncomingMessage } from 'node:http';
import {
  isLoopbackAddress,
  isLoopbackHost,
  probeFailed,
  type ProbeOutcome,
  type ProbeTarget,
} from '../../../domain/node/health/probe-target.js';
import type { ProbeAttemptOptions } from '../../../ports/node/health-probe.js';

/** A health answer's headers are small; anything larger is not one (the body is never read). */
export const PROBE_HEADER_MAX_BYTES = 8 * 1024;

/** The lookup's refusal of a name that resolves off this machine (only `localhost` is looked up). */
const NOT_LOOPBACK = 'E_PROBE_NOT_LOOPBACK';

type HttpTarget = Extract<ProbeTarget, { readonly kind: 'http' | 'unix-http' }>;

interface Endpoint {
  readonly host?: string;
  readonly port?: number;
  readonly socketPath?: string;
  readonly path: string;
  readonly hostHeader: string;
}

/**
 * One HTTP GET attempt, Kubernetes' httpGet: a status of 200–399 is success. Only loopback is
 * reached — an IP literal outside 127.0.0.0/8 or ::1 is refused before connecting, and
 * `localhost` only connects to the loopback addresses it resolves to — or a unix socket. No
 * redirect is followed, no connection is reused, the body is not read, the headers are capped,
 * and the whole attempt (lookup, connect, answer) is bounded by `timeoutMs`.
 */
export function attemptHttp(target: HttpTarget, options: ProbeAttemptOptions): Promise<ProbeOutcome> {
  const endpoint = endpointOf(target);
  if ('kind' in endpoint) return Promise.resolve(endpoint);
  return new Promise((resolve) => {
    let settled = false;
    const req = request({
      ...endpoint,
      method: 'GET',
      headers: { host: endpoint.hostHeader, 'user-agent': 'agent-upgrade-probe', accept: '*/*', connection: 'close' },
      agent: false,
      maxHeaderSize: PROBE_HEADER_MAX_BYTES,
      lookup: loopbackLookup,
    });
    const finish = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(outcome);
    };
    const deadline = setTimeout(
      () => finish(probeFailed('timed-out', `timed out after ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const onAbort = (): void => finish(probeFailed('interrupted', 'interrupted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();
    // Kept for the request's life: destroying it after the verdict may still emit an error.
    req.on('error', (error: NodeJS.ErrnoException) => finish(errorOutcome(error)));
    req.on('response', (response: IncomingMessage) => {
      response.on('error', () => undefined);
      response.destroy();
      finish(statusOutcome(response.statusCode ?? 0));
    });
    req.end();
  });
}

function endpointOf(target: HttpTarget): Endpoint | ProbeOutcome {
  if (target.kind === 'unix-http') return { socketPath: target.socket, path: target.path, hostHeader: 'localhost' };
  // The one place the full URL (query included) is used: the request line, never a message.
  const url = new URL(target.url.revealForRequest());
  if (url.protocol !== 'http:') return probeFailed('not-loopback', 'only http:// probe URLs are supported');
  if (!isLoopbackHost(url.hostname)) return probeFailed('not-loopback', `${url.hostname} is not a loopback host`);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 80 : Number(url.port),
    path: `${url.pathname}${url.search}`,
    hostHeader: url.host,
  };
}

function statusOutcome(status: number): ProbeOutcome {
  return status >= 200 && status < 400 ? { kind: 'succeeded' } : probeFailed('http-status', `HTTP ${status}`);
}

function errorOutcome(error: NodeJS.ErrnoException): ProbeOutcome {
  const code = error.code ?? 'UNKNOWN';
  if (code === NOT_LOOPBACK) return probeFailed('not-loopback', 'localhost does not resolve to a loopback address');
  if (code === 'ECONNREFUSED') return probeFailed('connection-failed', 'connection refused');
  if (code === 'ENOENT') return probeFailed('connection-failed', 'no socket at the probe path');
  if (code === 'ECONNRESET') return probeFailed('connection-failed', 'connection reset');
  if (code === 'HPE_HEADER_OVERFLOW') return probeFailed('bad-response', 'the answer headers are too large');
  if (code.startsWith('HPE_')) return probeFailed('bad-response', 'the answer is not valid HTTP');
  return probeFailed('connection-failed', `connection failed (${code})`);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Name resolution for the probe: only loopback answers are kept, so `localhost` mapped elsewhere
 * in /etc/hosts is refused rather than followed off the machine.
 */
function loopbackLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return callback(error, []);
    const loopback = addresses.filter((entry) => isLoopbackAddress(entry.address));
    const first = loopback[0];
    if (first === undefined)
      return callback(Object.assign(new Error('not a loopback address'), { code: NOT_LOOPBACK }), []);
    if (options.all === true) return callback(null, loopback);
    return callback(null, first.address, first.family);
  });
}
