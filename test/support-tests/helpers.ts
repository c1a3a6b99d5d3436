import { spawnSync } from 'node:child_process';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { get as httpsGet } from 'node:https';

/** What a plain node client observed; never rejects, so tests assert on every outcome. */
export interface Observed {
  readonly status: number | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** True only if the message ended as framed (node's `res.complete`). */
  readonly complete: boolean;
  readonly error: (Error & { code?: string }) | undefined;
}

export interface GetOptions {
  readonly ca?: string;
  readonly headers?: Record<string, string>;
  /** The client gives up (destroys the request) after this long; every wait stays bounded. */
  readonly timeoutMs?: number;
  /** Stop reading and hang up after this many body bytes (for endless bodies). */
  readonly stopAfterBytes?: number;
}

export function observe(url: string, options: GetOptions = {}): Promise<Observed> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let status: number | undefined;
    let headers: IncomingHttpHeaders = {};
    let complete = false;
    let error: Observed['error'];
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ status, headers, body: Buffer.concat(chunks), complete, error });
    };
    const get = url.startsWith('https:') ? httpsGet : httpGet;
    // agent: false — a fresh socket per request, so nothing is pooled past the test.
    const req = get(
      url,
      { agent: false, headers: options.headers, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        status = res.statusCode;
        headers = res.headers;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          received += c.length;
          if (options.stopAfterBytes !== undefined && received >= options.stopAfterBytes) finish();
        });
        res.on('error', (e) => (error ??= e));
        res.on('close', () => {
          complete = res.complete;
          finish();
        });
      },
    );
    req.on('error', (e) => {
      error ??= e;
      // After the headers, let the response deliver what it already parsed; it closes next.
      if (status === undefined) finish();
    });
    const timer = setTimeout(() => {
      error ??= Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' });
      finish();
    }, options.timeoutMs ?? 3000);
  });
}

export interface ToolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run a system tool with `input` on stdin, bounded to 5 s. */
export function tool(command: string, args: readonly string[], input: Uint8Array): ToolResult {
  const r = spawnSync(command, args, { input, timeout: 5000, maxBuffer: 16 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout.toString('latin1'), stderr: r.stderr.toString('latin1') };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
