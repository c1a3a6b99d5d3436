import type { Agent, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ClusterError } from '../../../domain/common/port-errors.js';
import { createAgent, SOCKETS_MAX } from './connect-agent.js';
import type { AuthState, Credentials } from './credentials.js';
import type { ClusterConfig } from './kubeconfig.js';
import { retryAfterMs, ThrottledError } from './throttled-error.js';

/** Every API call is bounded: a hung server must not hold the upgrade forever. */
export const REQUEST_TIMEOUT_MS = 30_000;
const RESPONSE_MAX_BYTES = 64 * 1024 * 1024;

export interface KubeResponse {
  readonly status: number;
  readonly body: unknown;
  readonly retryAfter?: string | string[] | undefined;
}

interface Pool {
  readonly tlsId: string;
  readonly agent: Agent;
  inFlight: number;
  retired: boolean;
}

/**
 * JSON requests to the API server with current credentials and the kubeconfig's TLS trust, over
 * a keep-alive pool that is replaced when the client certificate changes (the old one closes once
 * its requests are done). A 401 makes the credentials be read again, and the request is sent once
 * more when that changed them. Non-2xx answers are ClusterErrors carrying the status and the
 * Status reason (a 429 that says when to come back, a ThrottledError); transport failures are
 * ClusterErrors with status `null`.
 */
export class KubeHttp {
  private readonly secure: boolean;
  private pool: Pool | null = null;

  constructor(
    readonly config: ClusterConfig,
    readonly credentials: Credentials,
    private readonly proxy: URL | null,
    /** Requests under way at once at most (connections of the keep-alive pool). */
    private readonly sockets: number = SOCKETS_MAX,
  ) {
    this.secure = config.server.startsWith('https:');
  }

  async call(
    method: 'GET' | 'PATCH' | 'POST' | 'PUT',
    path: string,
    options: {
      readonly query?: Readonly<Record<string, string>>;
      readonly body?: object;
      readonly contentType?: string;
    } = {},
  ): Promise<unknown> {
    const url = new URL(this.config.server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    for (let attempt = 1; ; attempt += 1) {
      const state = await this.credentials.current();
      const response = await this.send(state, method, url, payload, options.contentType);
      // A refused credential is never sent twice: only a changed one earns the one retry.
      if (response.status === 401 && attempt === 1 && (await this.credentials.rejected(state))) continue;
      if (response.status >= 200 && response.status < 300) return response.body;
      const reason = (response.body as { reason?: unknown } | null)?.reason;
      const message = `${method} ${url.pathname} was answered ${response.status}${typeof reason === 'string' ? ` (${reason})` : ''}`;
      const waitMs = response.status === 429 ? retryAfterMs(response.retryAfter, response.body) : null;
      throw waitMs === null ? new ClusterError(response.status, message) : new ThrottledError(message, waitMs);
    }
  }

  /** A pool for one watch alone, without keep-alive: a stream that lasts minutes holds only its own connection. */
  watchAgent(state: AuthState): Agent {
    return this.createAgent(state, false);
  }

  close(): void {
    this.pool?.agent.destroy();
    this.pool = null;
  }

  private send(
    state: AuthState,
    method: string,
    url: URL,
    payload: Buffer | undefined,
    contentType: string | undefined,
  ): Promise<KubeResponse> {
    const pool = this.poolFor(state);
    pool.inFlight += 1;
    return new Promise<KubeResponse>((resolve, reject) => {
      const request = (this.secure ? httpsRequest : httpRequest)(
        url,
        {
          method,
          agent: pool.agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            ...state.headers,
            accept: 'application/json',
            ...(payload === undefined
              ? {}
              : { 'content-type': contentType ?? 'application/json', 'content-length': String(payload.length) }),
          },
        },
        (incoming) => void readJson(incoming).then(resolve, reject),
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', (error) =>
        reject(new ClusterError(null, `the API server cannot be reached: ${error.message}`)),
      );
      request.end(payload);
    }).finally(() => this.release(pool));
  }

  private poolFor(state: AuthState): Pool {
    const current = this.pool;
    if (current !== null && current.tlsId === state.tlsId) return current;
    if (current !== null) {
      current.retired = true;
      this.release(current, 0);
    }
    this.pool = { tlsId: state.tlsId, agent: this.createAgent(state, true), inFlight: 0, retired: false };
    return this.pool;
  }

  private release(pool: Pool, finished = 1): void {
    pool.inFlight -= finished;
    if (pool.retired && pool.inFlight === 0) pool.agent.destroy();
  }

  private createAgent(state: AuthState, keepAlive: boolean): Agent {
    const { config } = this;
    return createAgent({
      secure: this.secure,
      keepAlive,
      rejectUnauthorized: config.rejectUnauthorized,
      proxy: this.proxy,
      maxSockets: this.sockets,
      ...(config.ca === undefined ? {} : { ca: config.ca }),
      ...(state.cert === undefined ? {} : { cert: state.cert }),
      ...(state.key === undefined ? {} : { key: state.key }),
      ...(config.tlsServerName === undefined ? {} : { servername: config.tlsServerName }),
    });
  }
}

function readJson(incoming: IncomingMessage): Promise<KubeResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    incoming.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > RESPONSE_MAX_BYTES) incoming.destroy(new Error('response too large'));
      else chunks.push(chunk);
    });
    incoming.on('error', (error) =>
      reject(new ClusterError(null, `the API server's answer broke off: ${error.message}`)),
    );
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // A non-JSON error page: the status alone says enough.
      }
      resolve({ status: incoming.statusCode ?? 0, body, retryAfter: incoming.headers['retry-after'] });
    });
  });
}
