import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ClusterError } from '../../domain/port-errors.js';
import type { ClusterAccess } from './kubeconfig.js';

/** Every API call is bounded: a hung server must not hold the upgrade forever. */
export const REQUEST_TIMEOUT_MS = 30_000;
const RESPONSE_MAX_BYTES = 64 * 1024 * 1024;

export interface KubeResponse {
  readonly status: number;
  readonly body: unknown;
}

/**
 * JSON requests to the API server with the kubeconfig's credentials and TLS trust, over one
 * keep-alive agent. Non-2xx answers are ClusterErrors carrying the status and the Status reason;
 * transport failures are ClusterErrors with status `null`.
 */
export class KubeHttp {
  readonly agent: HttpAgent | HttpsAgent;
  private readonly secure: boolean;

  constructor(readonly access: ClusterAccess) {
    this.secure = access.server.startsWith('https:');
    this.agent = this.secure
      ? new HttpsAgent({ keepAlive: true, maxSockets: 4, ...access.tls })
      : new HttpAgent({ keepAlive: true, maxSockets: 4 });
  }

  async call(
    method: 'GET' | 'PATCH',
    path: string,
    options: {
      readonly query?: Readonly<Record<string, string>>;
      readonly body?: object;
      readonly contentType?: string;
    } = {},
  ): Promise<unknown> {
    const url = new URL(this.access.server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    const response = await new Promise<KubeResponse>((resolve, reject) => {
      const request = (this.secure ? httpsRequest : httpRequest)(
        url,
        {
          method,
          agent: this.agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            ...this.access.headers,
            accept: 'application/json',
            ...(payload === undefined
              ? {}
              : {
                  'content-type': options.contentType ?? 'application/json',
                  'content-length': String(payload.length),
                }),
          },
        },
        (incoming) => readJson(incoming).then(resolve, reject),
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', (error) =>
        reject(new ClusterError(null, `the API server cannot be reached: ${error.message}`)),
      );
      request.end(payload);
    });
    if (response.status >= 200 && response.status < 300) return response.body;
    const reason = (response.body as { reason?: unknown } | null)?.reason;
    throw new ClusterError(
      response.status,
      `${method} ${url.pathname} was answered ${response.status}${typeof reason === 'string' ? ` (${reason})` : ''}`,
    );
  }

  close(): void {
    this.agent.destroy();
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
      resolve({ status: incoming.statusCode ?? 0, body });
    });
  });
}
