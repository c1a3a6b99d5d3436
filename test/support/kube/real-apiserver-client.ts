import { readFileSync } from 'node:fs';
import { request } from 'node:https';

/** Who a request is made as: a client certificate issued by the harness, and its kubeconfig. */
export interface KubeIdentity {
  /** The username the API server sees (the certificate's CN). */
  readonly user: string;
  /** The groups it sees (the certificate's O entries). */
  readonly groups: readonly string[];
  readonly certPath: string;
  readonly keyPath: string;
  /** A kubeconfig for this identity alone (server, CA, client certificate and key as files). */
  readonly kubeconfigPath: string;
}

export interface KubeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

export interface KubeRequestOptions {
  readonly body?: unknown;
  /** Default `application/json`; status patches use `application/merge-patch+json`. */
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * One HTTPS request to the real API server as `identity` (or with no client certificate at all),
 * verifying the server against `caPath`.
 * No keep-alive agent: every request stands alone, so teardown never waits on pooled sockets.
 */
export function kubeRequest(
  origin: string,
  caPath: string,
  identity: Pick<KubeIdentity, 'certPath' | 'keyPath'> | 'anonymous',
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, origin), {
      method,
      agent: false,
      ca: readFileSync(caPath),
      ...(identity === 'anonymous'
        ? {}
        : { cert: readFileSync(identity.certPath), key: readFileSync(identity.keyPath) }),
      headers: {
        accept: 'application/json',
        ...(payload === undefined
          ? {}
          : {
              'content-type': options.contentType ?? 'application/json',
              'content-length': Buffer.byteLength(payload),
            }),
      },
      timeout: timeoutMs,
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) });
      });
    });
    req.end(payload);
  });
}
