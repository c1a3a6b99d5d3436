// A TUF mirror on loopback for tests: `<dir>/repository/metadata/*` at /metadata/ and
// `<dir>/repository/targets/*` at /targets/, read from disk on every request (so a tuf-repo
// command between two client runs is served at once), with per-path overrides that turn it into
// a hostile mirror: another status, another body, a delay, a body that never ends.

import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve, sep } from 'node:path';

/** What to do instead of serving the file; unset fields keep the honest behaviour. */
export interface TufMirrorOverride {
  /** Status to answer with (the body is the file's, or `body`, or empty when neither). */
  readonly status?: number;
  /** A replacement body, or a function of the file's bytes (undefined when there is no file). */
  readonly body?: string | Uint8Array | ((original: Buffer | undefined) => string | Uint8Array);
  /** Milliseconds to wait before answering (the socket stays open; close() ends it). */
  readonly delayMs?: number;
  /** Answer 200 and then send bytes until the client hangs up (or close()). */
  readonly endless?: boolean;
}

/** Decides per request path (`/metadata/timestamp.json`); undefined serves the file. */
export type TufMirrorHook = (path: string) => TufMirrorOverride | undefined;

export interface TufMirror {
  /** `http://127.0.0.1:port/metadata`, no trailing slash. */
  readonly metadataUrl: string;
  /** `http://127.0.0.1:port/targets`, no trailing slash. */
  readonly targetsUrl: string;
  /** Every request path, in order. */
  readonly requests: readonly string[];
  /** Overrides one path from now on (undefined restores it); checked before the hook. */
  override(path: string, override: TufMirrorOverride | undefined): void;
  /** Idempotent. Ends every connection (stalled and endless ones too) and stops listening. */
  close(): Promise<void>;
}

const ENDLESS_CHUNK = Buffer.alloc(64 * 1024, 0x7b);

export async function serveTufRepo(dir: string, options: { hook?: TufMirrorHook } = {}): Promise<TufMirror> {
  const roots = { metadata: resolve(dir, 'repository', 'metadata'), targets: resolve(dir, 'repository', 'targets') };
  const overrides = new Map<string, TufMirrorOverride>();
  const requests: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(path);
    const override = overrides.get(path) ?? options.hook?.(path);
    const answer = (): void => void respond(res, fileFor(roots, path), override).catch(() => res.destroy());
    if (override?.delayMs === undefined) return answer();
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, override.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed: Promise<void> | undefined;
  return {
    metadataUrl: `${origin}/metadata`,
    targetsUrl: `${origin}/targets`,
    requests,
    override: (path, override) => (override ? overrides.set(path, override) : overrides.delete(path)),
    close: () => {
      closed ??= new Promise<void>((done) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => done());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** The file a path names, or undefined outside the two trees (`..`, encoded or not, included). */
function fileFor(roots: { metadata: string; targets: string }, path: string): string | undefined {
  const match = /^\/(metadata|targets)\/(.+)$/.exec(path);
  if (!match) return undefined;
  const root = roots[match[1] as 'metadata' | 'targets'];
  let relative: string;
  try {
    relative = decodeURIComponent(match[2] ?? '');
  } catch {
    return undefined;
  }
  const file = resolve(root, relative);
  return file.startsWith(root + sep) ? file : undefined;
}

async function respond(
  res: ServerResponse,
  file: string | undefined,
  override: TufMirrorOverride | undefined,
): Promise<void> {
  if (res.destroyed) return;
  if (override?.endless) return endless(res);
  // HEAD gets the same head; node leaves the body out.
  const original = file === undefined ? undefined : await readFile(file).catch(() => undefined);
  const replaced = typeof override?.body === 'function' ? override.body(original) : override?.body;
  const body = replaced === undefined ? original : Buffer.from(replaced);
  const status = override?.status ?? (body === undefined ? 404 : 200);
  const type = file?.endsWith('.json') ? 'application/json' : 'application/octet-stream';
  res.writeHead(status, { 'content-type': type, 'content-length': body?.length ?? 0 });
  res.end(body);
}

/** Writes until the client goes away, waiting for the socket to drain so memory stays flat. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const pump = (): void => {
    let room = true;
    while (room && !res.destroyed) room = res.write(ENDLESS_CHUNK);
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('close', () => res.removeListener('drain', pump));
  pump();
}
