import { afterEach, describe, expect, it } from 'vitest';
import {
  endless,
  type HostileServer,
  redirect,
  serve,
  stallAfter,
  stallBeforeHeaders,
  startHostileServer,
  status,
  trickle,
  truncate,
} from '../support/http/hostile-server.js';
import { endlessGzip } from '../support/archive/gzip.js';
import { startBlackHole } from '../support/http/black-hole.js';
import { observe, sleep } from './helpers.js';

// Every server started here is closed after its test, whatever the outcome.
const servers: HostileServer[] = [];
async function start(): Promise<HostileServer> {
  const s = await startHostileServer();
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const body = Buffer.from('0123456789'.repeat(100)); // 1000 bytes

describe('serve', () => {
  it('serves an honest body and records method, path with query and headers', async () => {
    const s = await start();
    s.route('/a.tgz', serve(body));
    const r = await observe(s.url('/a.tgz?X-Amz-Signature=CANARY'), { headers: { 'accept-encoding': 'identity' } });
    expect(r).toMatchObject({ status: 200, complete: true, error: undefined });
    expect(r.headers['content-length']).toBe('1000');
    expect(r.body.equals(body)).toBe(true);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ method: 'GET', path: '/a.tgz?X-Amz-Signature=CANARY' });
    expect(s.requests[0]?.headers['accept-encoding']).toBe('identity');
    expect(s.url('/x')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/x$/);
  });

  it('a Content-Length larger than the body: the client sees the lie, then a premature close', async () => {
    const s = await start();
    s.route('/long', serve(body, { contentLength: 5000 }));
    const r = await observe(s.url('/long'));
    expect(r.headers['content-length']).toBe('5000');
    expect(r.body.length).toBe(1000);
    expect(r.complete).toBe(false);
  });

  it('a Content-Length smaller than the body: the client reads the declared bytes, surplus follows', async () => {
    const s = await start();
    s.route('/short', serve(body, { contentLength: 10 }));
    const r = await observe(s.url('/short'));
    expect(r.headers['content-length']).toBe('10');
    expect(r.body.toString()).toBe('0123456789');
    expect(r.complete).toBe(true);
    // node's parser notices the surplus bytes after a `Connection: close` message.
    expect(r.error?.code).toBe('HPE_CLOSED_CONNECTION');
  });

  it("contentLength 'omit' sends chunked, 'until-close' sends no framing at all", async () => {
    const s = await start();
    s.route('/chunked', serve(body, { contentLength: 'omit' }));
    s.route('/eof', serve(body, { contentLength: 'until-close' }));
    const chunked = await observe(s.url('/chunked'));
    expect(chunked.headers['transfer-encoding']).toBe('chunked');
    expect(chunked.headers['content-length']).toBeUndefined();
    expect(chunked.body.equals(body)).toBe(true);
    const eof = await observe(s.url('/eof'));
    expect(eof.headers['transfer-encoding']).toBeUndefined();
    expect(eof.headers['content-length']).toBeUndefined();
    expect(eof.body.equals(body)).toBe(true);
  });

  it('contentEncoding and extra headers are sent verbatim, the body untouched', async () => {
    const s = await start();
    s.route('/enc', serve(body, { contentEncoding: 'gzip', headers: { 'X-Trap': ['a', 'b'] } }));
    const r = await observe(s.url('/enc'));
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['x-trap']).toBe('a, b');
    expect(r.body.equals(body)).toBe(true);
  });

  it('unrouted paths are 404; status() covers 404/500/206/204', async () => {
    const s = await start();
    s.route('/500', status(500, 'boom'));
    s.route('/206', status(206, 'partial'));
    s.route('/204', status(204, 'ignored'));
    expect((await observe(s.url('/nothing'))).status).toBe(404);
    const r500 = await observe(s.url('/500'));
    expect([r500.status, r500.body.toString()]).toEqual([500, 'boom']);
    expect((await observe(s.url('/206'))).status).toBe(206);
    const r204 = await observe(s.url('/204'));
    expect([r204.status, r204.body.length, r204.complete]).toEqual([204, 0, true]);
  });
});

describe('broken transfers', () => {
  it('truncate: declared length, partial body, then the socket dies', async () => {
    const s = await start();
    s.route('/t', truncate(body, { declaredLength: 1000, sendBytes: 300 }));
    const r = await observe(s.url('/t'));
    expect(r.headers['content-length']).toBe('1000');
    expect(r.body.length).toBe(300);
    expect(r.complete).toBe(false);
  });

  it('stallBeforeHeaders keeps the socket open with no answer until close() destroys it', async () => {
    const s = await start();
    s.route('/stall', stallBeforeHeaders());
    const pending = observe(s.url('/stall'), { timeoutMs: 4000 });
    await sleep(300);
    expect(s.requests).toHaveLength(1);
    expect(s.openConnections()).toBe(1);
    const t0 = Date.now();
    await s.close();
    const r = await pending;
    expect(Date.now() - t0).toBeLessThan(1000); // ended by close(), not by the client timeout
    expect(r.status).toBeUndefined();
    expect(r.error?.code).toBe('ECONNRESET');
  });

  it('a client timeout against a stalled server is observed as such', async () => {
    const s = await start();
    s.route('/stall', stallBeforeHeaders());
    const r = await observe(s.url('/stall'), { timeoutMs: 200 });
    expect(r.error?.code).toBe('CLIENT_TIMEOUT');
  });

  it('stallAfter sends N body bytes then goes silent', async () => {
    const s = await start();
    s.route('/mid', stallAfter(body, 100));
    const r = await observe(s.url('/mid'), { timeoutMs: 400 });
    expect(r.headers['content-length']).toBe('1000');
    expect(r.body.length).toBe(100);
    expect(r.error?.code).toBe('CLIENT_TIMEOUT');
  });

  it('trickle delivers the whole body slowly, chunk by chunk', async () => {
    const s = await start();
    s.route('/slow', trickle(body.subarray(0, 50), { chunkBytes: 10, intervalMs: 40 }));
    const t0 = Date.now();
    const r = await observe(s.url('/slow'));
    expect(r.complete).toBe(true);
    expect(r.body.equals(body.subarray(0, 50))).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(5 * 40 - 20);
  });

  it('endless streams chunked data until the client hangs up, then the server lets go', async () => {
    const s = await start();
    s.route('/forever', endless({ chunkBytes: 64 * 1024 }));
    const r = await observe(s.url('/forever'), { stopAfterBytes: 8 * 1024 * 1024 });
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.body.length).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    expect(r.complete).toBe(false);
    for (let i = 0; i < 50 && s.openConnections() > 0; i++) await sleep(20);
    expect(s.openConnections()).toBe(0);
  });

  it('endless stops at its safety bound by destroying the socket (never a clean end)', async () => {
    const s = await start();
    s.route('/bounded', endless({ chunkBytes: 1000, maxBytes: 10_000 }));
    const r = await observe(s.url('/bounded'));
    expect(r.body.length).toBe(10_000);
    expect(r.complete).toBe(false);
  });

  it('endless can carry an always-valid gzip prefix', async () => {
    const s = await start();
    s.route('/gz', endless({ chunkBytes: 4096, source: () => endlessGzip() }));
    const r = await observe(s.url('/gz'), { stopAfterBytes: 100_000 });
    expect([...r.body.subarray(0, 3)]).toEqual([0x1f, 0x8b, 0x08]);
  });
});

describe('redirects', () => {
  it('sends relative and absolute locations verbatim, including loops and other servers', async () => {
    const a = await start();
    const b = await start();
    a.route('/rel', redirect('/final'));
    a.route('/loop1', redirect('/loop2', 301));
    a.route('/loop2', redirect('/loop1', 307));
    a.route('/cross', redirect(b.url('/there'), 308));
    b.route('/there', serve('arrived'));
    const rel = await observe(a.url('/rel'));
    expect([rel.status, rel.headers.location]).toEqual([302, '/final']);
    const loop1 = await observe(a.url('/loop1'));
    const loop2 = await observe(new URL(loop1.headers.location ?? '', a.origin).href);
    expect([loop1.status, loop2.status, loop2.headers.location]).toEqual([301, 307, '/loop1']);
    const cross = await observe(a.url('/cross'));
    expect(cross.status).toBe(308);
    const there = await observe(cross.headers.location ?? '');
    expect(there.body.toString()).toBe('arrived');
    expect(b.requests.map((q) => q.path)).toEqual(['/there']);
  });
});

describe('close', () => {
  it('is idempotent and refuses new connections afterwards', async () => {
    const s = await start();
    s.route('/x', serve('x'));
    const url = s.url('/x');
    await s.close();
    await s.close();
    const r = await observe(url, { timeoutMs: 1000 });
    expect(r.error?.code).toBe('ECONNREFUSED');
  });
});

describe('black hole (accepts, never speaks)', () => {
  it.each(['http', 'https'] as const)(
    'a %s client gets no response and no handshake until it gives up',
    async (scheme) => {
      const hole = await startBlackHole();
      try {
        const r = await observe(hole.url('/a.tgz', scheme), { timeoutMs: 300 });
        expect(r.error?.code).toBe('CLIENT_TIMEOUT');
        expect(hole.accepted()).toBe(1);
      } finally {
        await hole.close();
      }
    },
  );
});
