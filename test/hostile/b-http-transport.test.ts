import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AxiosArtifactSource } from '../../src/adapters/node/http/axios-artifact-source.js';
import {
  concatBytes,
  endlessGzip,
  gzip,
  releaseArchive,
  releaseTar,
  sha256Hex,
  tarHeader,
} from '../support/archive/index.js';
import {
  type Behaviour,
  endless,
  type HostileServer,
  redirect,
  serve,
  stallAfter,
  stallBeforeHeaders,
  status,
  trickle,
  truncate,
} from '../support/http/hostile-server.js';
import { type CertVariant } from '../support/http/tls-material.js';
import { eventually, MEMBER, OTHER_MEMBER, PAYLOAD, useHarness } from './harness.js';

/** Category B: the HTTP transport lies, stalls, redirects and downgrades. */

const h = useHarness();
const ARCHIVE = releaseArchive(MEMBER, PAYLOAD);
const DIGEST = sha256Hex(ARCHIVE);
/**
 * A 2 MiB body, twice the default FAST cap of 1 MiB, that is a valid gzip prefix of a valid tar
 * (stored deflate blocks of 'A's after the member's header), so only the size cap can stop it.
 */
const BIG = takeBytes(
  endlessGzip({ prefix: tarHeader({ name: MEMBER, mode: 0o755, size: 3 * 1024 * 1024 }), fill: 0x41 }),
  2 * 1024 * 1024,
);
/** Binary cap large enough for BIG's member, so the archive cap is what trips. */
const ROOMY = { maxBinaryBytes: 4 * 1024 * 1024 };

function takeBytes(source: Iterable<Uint8Array>, count: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let have = 0;
  for (const piece of source) {
    parts.push(piece.subarray(0, count - have));
    have += Math.min(piece.length, count - have);
    if (have >= count) break;
  }
  return concatBytes(...parts);
}

async function serving(path: string, behaviour: Behaviour, tls = false): Promise<HostileServer> {
  const s = await h.server({ tls });
  s.route(path, behaviour);
  return s;
}

describe('B status codes other than a plain 200 → E_HTTP_STATUS', () => {
  const rows: [string, () => Behaviour][] = [
    ['404 whose body echoes the secret', () => status(404, `no such object ${h.canary}`)],
    ['500', () => status(500, 'internal error')],
    ['503', () => status(503, 'try later')],
    ['401', () => status(401, 'auth')],
    ['403 (expired SAS)', () => status(403, '<Error><Code>AuthenticationFailed</Code></Error>')],
    ['407 proxy auth', () => status(407)],
    ['418', () => status(418)],
    ['204 no content', () => status(204)],
    ['304 not modified', () => status(304)],
    [
      '206 partial content carrying a valid archive',
      () => serve(ARCHIVE, { status: 206, headers: { 'Content-Range': `bytes 0-${ARCHIVE.length - 1}/*` } }),
    ],
    ['203 non-authoritative carrying a valid archive', () => serve(ARCHIVE, { status: 203 })],
    ['201 created carrying a valid archive', () => serve(ARCHIVE, { status: 201 })],
    ['301 without a Location', () => serve('', { status: 301 })],
    ['302 with an empty Location', () => redirect('', 302)],
    ['300 multiple choices without a Location', () => serve('', { status: 300 })],
  ];
  it.each(rows)('%s', async (_name, behaviour) => {
    const s = await serving('/a.tgz', behaviour());
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_HTTP_STATUS');
    expect(s.requests).toHaveLength(1);
  });

  it('a 500 through the CLI exits 1 with the code in JSON', async () => {
    const s = await serving('/a.tgz', status(500));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), via: 'cli' }, 'E_HTTP_STATUS');
  });
});

describe('B13 redirect loops and long chains → E_TOO_MANY_REDIRECTS', () => {
  it.each([301, 302, 303, 307, 308])('a %i self-loop', async (code) => {
    const s = await h.server();
    s.route('/a.tgz', redirect(s.url(h.withCanary('/a.tgz')), code));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TOO_MANY_REDIRECTS');
    expect(s.requests).toHaveLength(11); // the first request plus 10 followed hops
  });

  it('a two-node loop with relative Locations', async () => {
    const s = await h.server();
    s.route('/a', redirect(h.withCanary('/b')));
    s.route('/b', redirect(h.withCanary('/a')));
    await h.refused({ url: s.url(h.withCanary('/a')) }, 'E_TOO_MANY_REDIRECTS');
  });

  it('a chain of 11 distinct hops that would end in a valid archive', async () => {
    const s = await h.server();
    for (let i = 0; i < 11; i++) s.route(`/hop${i}`, redirect(`/hop${i + 1}`));
    s.route('/hop11', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/hop0')) }, 'E_TOO_MANY_REDIRECTS');
    expect(s.requests.some((r) => r.path.startsWith('/hop11'))).toBe(false);
  });

  it('a cross-server ping-pong', async () => {
    const a = await h.server();
    const b = await h.server();
    a.route('/x', redirect(b.url(h.withCanary('/x'))));
    b.route('/x', redirect(a.url(h.withCanary('/x'))));
    await h.refused({ url: a.url(h.withCanary('/x')) }, 'E_TOO_MANY_REDIRECTS');
  });

  it('control: exactly 10 hops are followed', async () => {
    const s = await h.server();
    for (let i = 0; i < 10; i++) s.route(`/hop${i}`, redirect(`/hop${i + 1}`));
    s.route('/hop10', serve(ARCHIVE));
    await h.fetched({ url: s.url(h.withCanary('/hop0')), sha256: DIGEST }, PAYLOAD);
  });
});

describe('B11 redirects that leave the allowed URL space → E_REDIRECT_REFUSED', () => {
  it.each([301, 302, 303, 307, 308])('https → http (%i) is never followed', async (code) => {
    const plain = await serving('/a.tgz', serve(ARCHIVE));
    const secure = await serving('/a.tgz', redirect(plain.url(h.withCanary('/a.tgz')), code), true);
    await h.refused(
      { url: secure.url(h.withCanary('/a.tgz')), caPem: secure.tls?.caPem ?? '', sha256: DIGEST },
      'E_REDIRECT_REFUSED',
    );
    expect(plain.requests).toEqual([]);
  });

  it('https → https → http: the downgrade is refused at any hop', async () => {
    const plain = await serving('/a.tgz', serve(ARCHIVE));
    const secure = await h.server({ tls: true });
    secure.route('/first', redirect(h.withCanary('/second')));
    secure.route('/second', redirect(plain.url(h.withCanary('/a.tgz'))));
    await h.refused({ url: secure.url(h.withCanary('/first')), caPem: secure.tls?.caPem ?? '' }, 'E_REDIRECT_REFUSED');
    expect(plain.requests).toEqual([]);
  });

  const locations: [string, (c: string) => string][] = [
    ['file:', (c) => `file:///etc/shadow?sig=${c}`],
    ['ftp:', (c) => `ftp://127.0.0.1/a.tgz?sig=${c}`],
    ['data:', (c) => `data:application/gzip;base64,H4sI?sig=${c}`],
    ['javascript:', (c) => `javascript:alert('${c}')`],
    ['gopher:', (c) => `gopher://127.0.0.1:70/_${c}`],
    ['userinfo carrying the secret', (c) => `http://user:${c}@127.0.0.1:1/a.tgz`],
    ['a fragment carrying the secret', (c) => `/b.tgz#${c}`],
    ['an unparseable absolute URL', (c) => `http://[::1/a.tgz?sig=${c}`],
    ['a URL without a host', (c) => `http://?sig=${c}`],
  ];
  it.each(locations)('to %s', async (_name, location) => {
    const s = await h.server();
    s.route('/a.tgz', redirect(location(h.canary)));
    s.route('/b.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_REDIRECT_REFUSED');
    expect(s.requests).toHaveLength(1);
  });

  it('https → http through the CLI (exit 1)', async () => {
    const plain = await serving('/a.tgz', serve(ARCHIVE));
    const secure = await serving('/a.tgz', redirect(plain.url(h.withCanary('/a.tgz'))), true);
    await h.refused(
      { url: secure.url(h.withCanary('/a.tgz')), caPem: secure.tls?.caPem ?? '', via: 'cli' },
      'E_REDIRECT_REFUSED',
    );
  });

  it('control: http → https is followed', async () => {
    const secure = await serving('/a.tgz', serve(ARCHIVE), true);
    const plain = await serving('/a.tgz', redirect(secure.url(h.withCanary('/a.tgz'))));
    await h.fetched(
      { url: plain.url(h.withCanary('/a.tgz')), caPem: secure.tls?.caPem ?? '', sha256: DIGEST },
      PAYLOAD,
    );
    expect(secure.requests).toHaveLength(1);
  });
});

describe('B16 Content-Length above the archive cap → E_TOO_LARGE before the body is read', () => {
  it('an honest 2 MiB body over a 1 MiB cap', async () => {
    const s = await serving('/a.tgz', serve(BIG));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TOO_LARGE');
  });

  it.each([
    ['a huge declared length', 10 * 1024 ** 3],
    ['16 digits', 1_000_000_000_000_000],
    ['17 digits (a valid numeral, RFC 9110 §8.6)', 10_000_000_000_000_000],
    ['cap + 1', 1024 * 1024 + 1],
  ])('%s: refused on the headers alone', async (_name, declared) => {
    // The server sends the headers and closes: a client that started reading the body would
    // report a truncation instead.
    const s = await serving('/a.tgz', serve(new Uint8Array(0), { contentLength: declared }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), withinMs: 2000 }, 'E_TOO_LARGE');
  });

  it('headers declare 2 MiB and the body never comes: E_TOO_LARGE long before the idle timeout', async () => {
    const s = await serving('/a.tgz', stallAfter(BIG, 0));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { idleTimeoutMs: 3000 }, withinMs: 1500 },
      'E_TOO_LARGE',
    );
    expect(await eventually(() => s.openConnections() === 0, 1000)).toBe(true);
  });

  it('one byte over a cap set to the archive size', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { maxArchiveBytes: ARCHIVE.length - 1 } },
      'E_TOO_LARGE',
    );
  });

  it('through the CLI', async () => {
    const s = await serving('/a.tgz', serve(BIG));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), via: 'cli' }, 'E_TOO_LARGE');
  });

  it('control: an archive exactly at the cap is accepted', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    await h.fetched(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { maxArchiveBytes: ARCHIVE.length }, sha256: DIGEST },
      PAYLOAD,
    );
  });
});

describe('B19 a chunked body that never ends → E_TOO_LARGE at the compressed cap', () => {
  const memberHeader = (size: number): Uint8Array => tarHeader({ name: MEMBER, mode: 0o755, size });

  it('an endless valid gzip prefix whose tar member fits the binary cap', async () => {
    const s = await serving(
      '/a.tgz',
      endless({ chunkBytes: 16 * 1024, source: () => endlessGzip({ prefix: memberHeader(512 * 1024), fill: 0x41 }) }),
    );
    await h.refused(
      {
        url: s.url(h.withCanary('/a.tgz')),
        artifact: { maxArchiveBytes: 128 * 1024, maxBinaryBytes: 1024 * 1024 },
        withinMs: 3000,
      },
      'E_TOO_LARGE',
    );
    expect(await eventually(() => s.openConnections() === 0, 1000)).toBe(true);
  });

  it('the same over https', async () => {
    const s = await serving(
      '/a.tgz',
      endless({ chunkBytes: 16 * 1024, source: () => endlessGzip({ prefix: memberHeader(512 * 1024), fill: 0x41 }) }),
      true,
    );
    await h.refused(
      {
        url: s.url(h.withCanary('/a.tgz')),
        caPem: s.tls?.caPem ?? '',
        artifact: { maxArchiveBytes: 128 * 1024, maxBinaryBytes: 1024 * 1024 },
        withinMs: 3000,
      },
      'E_TOO_LARGE',
    );
  });

  it('an honest-looking chunked body (no Content-Length) longer than the cap', async () => {
    const s = await serving('/a.tgz', serve(BIG, { contentLength: 'omit' }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), artifact: ROOMY }, 'E_TOO_LARGE');
  });

  it('a body without framing (read until close) longer than the cap', async () => {
    const s = await serving('/a.tgz', serve(BIG, { contentLength: 'until-close' }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), artifact: ROOMY }, 'E_TOO_LARGE');
  });
});

describe('B18 bodies shorter or longer than declared → E_TRUNCATED', () => {
  it('Content-Length larger than the body, then the server closes', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE, { contentLength: ARCHIVE.length + 100 }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TRUNCATED');
  });

  it('Content-Length smaller than the body cuts the archive', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE, { contentLength: ARCHIVE.length - 20 }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TRUNCATED');
  });

  it.each([
    ['after half the body', Math.floor(ARCHIVE.length / 2)],
    ['before any body byte', 0],
    ['one byte short', ARCHIVE.length - 1],
  ])('the connection is reset %s', async (_name, sendBytes) => {
    const s = await serving('/a.tgz', truncate(ARCHIVE, { declaredLength: ARCHIVE.length, sendBytes }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TRUNCATED');
  });

  it('a 1 MiB declared body reset after 64 KiB', async () => {
    const body = concatBytes(ARCHIVE, new Uint8Array(1024 * 1024 - ARCHIVE.length));
    const s = await serving('/a.tgz', truncate(body, { declaredLength: body.length, sendBytes: 64 * 1024 }));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { maxArchiveBytes: 2 * 1024 * 1024 } },
      'E_TRUNCATED',
    );
  });

  it('a chunked body cut before its last chunk', async () => {
    const s = await serving(
      '/a.tgz',
      endless({ chunkBytes: 16, maxBytes: Math.floor(ARCHIVE.length / 2), source: () => [ARCHIVE] }),
    );
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TRUNCATED');
  });

  it('an unframed body (read until close) that stops inside the archive', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE.slice(0, ARCHIVE.length - 20), { contentLength: 'until-close' }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TRUNCATED');
  });

  it('a complete archive, but Content-Length promised 100 more bytes and the connection is reset', async () => {
    const body = concatBytes(ARCHIVE, new Uint8Array(100));
    const s = await serving('/a.tgz', truncate(body, { declaredLength: body.length, sendBytes: ARCHIVE.length }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TRUNCATED');
  });

  it('a complete archive, but Content-Length promised 100 more bytes and the server closes', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE, { contentLength: ARCHIVE.length + 100 }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TRUNCATED');
  });

  it('a complete archive, Content-Length promised 100 more bytes, the connection drops 200 ms later', async () => {
    const s = await serving('/a.tgz', stallAfter(concatBytes(ARCHIVE, new Uint8Array(100)), ARCHIVE.length));
    const drop = setTimeout(() => void s.close(), 200);
    try {
      await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST, withinMs: 2000 }, 'E_TRUNCATED');
    } finally {
      clearTimeout(drop);
    }
  });

  it('through the CLI', async () => {
    const s = await serving('/a.tgz', truncate(ARCHIVE, { declaredLength: ARCHIVE.length, sendBytes: 40 }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), via: 'cli' }, 'E_TRUNCATED');
  });
});

describe('B20/B22 stalls, trickles and black holes → E_TIMEOUT within the configured limits', () => {
  it('no response headers (header timeout 500 ms)', async () => {
    const s = await serving('/a.tgz', stallBeforeHeaders());
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), withinMs: 2000 }, 'E_TIMEOUT');
  });

  it('no response headers over https', async () => {
    const s = await serving('/a.tgz', stallBeforeHeaders(), true);
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', withinMs: 2000 }, 'E_TIMEOUT');
  });

  it('the total deadline fires before a longer header timeout', async () => {
    const s = await serving('/a.tgz', stallBeforeHeaders());
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), headerTimeoutMs: 10_000, artifact: { timeoutMs: 700 }, withinMs: 2500 },
      'E_TIMEOUT',
    );
  });

  it.each([
    ['after the headers, before any body byte', 0],
    ['in the middle of the body', Math.floor(ARCHIVE.length / 2)],
    ['one byte before the end', ARCHIVE.length - 1],
  ])('a stall %s (idle timeout 300 ms)', async (_name, bytes) => {
    const s = await serving('/a.tgz', stallAfter(ARCHIVE, bytes));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { idleTimeoutMs: 300 }, withinMs: 2000 },
      'E_TIMEOUT',
    );
  });

  it('a complete archive, then a stall where Content-Length promised 100 more bytes', async () => {
    const s = await serving('/a.tgz', stallAfter(concatBytes(ARCHIVE, new Uint8Array(100)), ARCHIVE.length));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST, artifact: { idleTimeoutMs: 300 }, withinMs: 2000 },
      'E_TIMEOUT',
    );
  });

  it('a trickle that keeps resetting the idle timer is stopped by the total deadline', async () => {
    const s = await serving('/a.tgz', trickle(ARCHIVE, { chunkBytes: 1, intervalMs: 50 }));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { idleTimeoutMs: 300, timeoutMs: 900 }, withinMs: 2500 },
      'E_TIMEOUT',
    );
  });

  it('a trickle slower than the idle timeout', async () => {
    const s = await serving('/a.tgz', trickle(ARCHIVE, { chunkBytes: 4, intervalMs: 700 }));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { idleTimeoutMs: 300 }, withinMs: 2500 },
      'E_TIMEOUT',
    );
  });

  it('a redirect to a server that never answers', async () => {
    const stall = await serving('/a.tgz', stallBeforeHeaders());
    const s = await serving('/a.tgz', redirect(stall.url(h.withCanary('/a.tgz'))));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), withinMs: 2000 }, 'E_TIMEOUT');
  });

  it.each(['http', 'https'] as const)('a TCP black hole (%s: no HTTP, no TLS handshake)', async (scheme) => {
    const hole = await h.blackHole();
    await h.refused({ url: hole.url(h.withCanary('/a.tgz'), scheme), withinMs: 2000 }, 'E_TIMEOUT');
    expect(hole.accepted()).toBe(1);
  });

  it('a stall through the CLI', async () => {
    const s = await serving('/a.tgz', stallAfter(ARCHIVE, 10));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { idleTimeoutMs: 300 }, via: 'cli', withinMs: 2500 },
      'E_TIMEOUT',
    );
  });
});

describe('B23/B24 TLS is never weakened → E_TLS', () => {
  it.each(['self-signed', 'expired', 'wrong-host'] as CertVariant[])('a %s certificate', async (certificate) => {
    const s = await h.server({ tls: true, certificate });
    s.route('/a.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', sha256: DIGEST }, 'E_TLS');
    expect(s.requests).toEqual([]);
  });

  it('a valid certificate from a CA the client does not trust', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE), true);
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_TLS');
    expect(s.requests).toEqual([]);
  });

  it('a redirect from a trusted server to one with an expired certificate', async () => {
    const bad = await h.server({ tls: true, certificate: 'expired' });
    bad.route('/a.tgz', serve(ARCHIVE));
    const good = await serving('/a.tgz', redirect(bad.url(h.withCanary('/a.tgz'))), true);
    await h.refused({ url: good.url(h.withCanary('/a.tgz')), caPem: good.tls?.caPem ?? '' }, 'E_TLS');
    expect(bad.requests).toEqual([]);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment: refused before connecting (https)', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE), true);
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } },
      'E_TLS',
    );
    expect(s.requests).toEqual([]);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment: refused even for http', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } }, 'E_TLS');
    expect(s.requests).toEqual([]);
  });

  it('a self-signed certificate through the CLI', async () => {
    const s = await h.server({ tls: true, certificate: 'self-signed' });
    s.route('/a.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', via: 'cli' }, 'E_TLS');
  });
});

describe('B no transparent decompression: a Content-Encoding → E_ARCHIVE_FORMAT', () => {
  // The body is the archive gzipped once more, so a client that decoded it would see a valid archive.
  it.each(['gzip', 'x-gzip', 'GZIP', 'deflate', 'br', 'zstd', 'compress', 'identity, gzip', 'gzip, identity'])(
    'Content-Encoding: %s',
    async (encoding) => {
      const s = await serving('/a.tgz', serve(gzip(ARCHIVE), { contentEncoding: encoding }));
      await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_ARCHIVE_FORMAT');
      expect(s.requests[0]?.headers['accept-encoding']).toBe('identity');
    },
  );

  it('Content-Encoding gzip on a chunked body', async () => {
    const s = await serving('/a.tgz', serve(gzip(ARCHIVE), { contentEncoding: 'gzip', contentLength: 'omit' }));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_ARCHIVE_FORMAT');
  });

  it('control: Content-Encoding identity is accepted', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE, { contentEncoding: 'identity' }));
    await h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, PAYLOAD);
    expect(s.requests[0]?.headers['accept-encoding']).toBe('identity');
  });
});

describe('B25 a captive portal or error page served as 200 → E_ARCHIVE_FORMAT', () => {
  const portal = '<!DOCTYPE html><html><body><form action="/login"><input name="user"></form></body></html>\n';
  it.each([
    ['an HTML login page', portal, undefined],
    ['an HTML login page, digest given', portal, DIGEST],
    ['a JSON error document', '{"error":"SignatureDoesNotMatch"}\n', undefined],
    ['plain text', 'Service temporarily unavailable\n', DIGEST],
  ])('%s', async (_name, body, sha256) => {
    const s = await serving('/a.tgz', serve(body, { headers: { 'Content-Type': 'text/html' } }));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), ...(sha256 === undefined ? {} : { sha256 }) },
      'E_ARCHIVE_FORMAT',
    );
  });
});

describe('B29 a wrong digest → E_DIGEST_MISMATCH', () => {
  const OTHER = releaseArchive(MEMBER, 'another build\n');
  it.each([
    ['the digest of another release', sha256Hex(OTHER)],
    ['the digest of the uncompressed tar', sha256Hex(releaseTar(MEMBER, PAYLOAD))],
    ['the digest of the binary inside', sha256Hex(PAYLOAD)],
    ['all zeros', '0'.repeat(64)],
    ["the other architecture's archive", sha256Hex(releaseArchive(OTHER_MEMBER, PAYLOAD))],
  ])('%s', async (_name, sha256) => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256 }, 'E_DIGEST_MISMATCH');
  });

  it('the right digest, but the server swaps in another valid release (mix-and-match)', async () => {
    const s = await serving('/a.tgz', serve(OTHER));
    await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, 'E_DIGEST_MISMATCH');
  });

  it('over https, through the CLI', async () => {
    const s = await serving('/a.tgz', serve(OTHER), true);
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', sha256: DIGEST, via: 'cli' },
      'E_DIGEST_MISMATCH',
    );
  });
});

describe('B proxy variables are honoured', () => {
  const PROXY_VARS = [
    'HTTP_PROXY',
    'http_proxy',
    'HTTPS_PROXY',
    'https_proxy',
    'NO_PROXY',
    'no_proxy',
    'ALL_PROXY',
    'all_proxy',
  ];
  async function withProxyEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
    const saved = new Map(PROXY_VARS.map((k) => [k, process.env[k]]));
    for (const k of PROXY_VARS) delete process.env[k];
    Object.assign(process.env, vars);
    try {
      return await body();
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it('HTTP_PROXY: the download goes through the forward proxy and succeeds', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    const proxy = await h.proxy();
    await withProxyEnv({ HTTP_PROXY: proxy.url }, () =>
      h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST }, PAYLOAD),
    );
    expect(proxy.requests.map((r) => r.method)).toEqual(['GET']);
    expect(proxy.requests[0]?.target.startsWith(`${s.origin}/a.tgz`)).toBe(true);
    expect(proxy.requests[0]?.headers['accept-encoding']).toBe('identity');
    expect(s.requests).toHaveLength(1);
  });

  it('HTTPS_PROXY: an https download is tunnelled with CONNECT and succeeds', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE), true);
    const proxy = await h.proxy();
    await withProxyEnv({ HTTPS_PROXY: proxy.url }, () =>
      h.fetched({ url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', sha256: DIGEST }, PAYLOAD),
    );
    expect(proxy.requests.map((r) => r.method)).toEqual(['CONNECT']);
    expect(proxy.requests[0]?.target).toBe(new URL(s.origin).host);
  });

  it('failures through the proxy keep their code (404 → E_HTTP_STATUS), proxy credentials never leak', async () => {
    const s = await serving('/a.tgz', status(404));
    const proxy = await h.proxy();
    const secret = `PROXYPASS-${h.canary}`;
    const proxyUrl = proxy.url.replace('http://', `http://user:${secret}@`);
    await withProxyEnv({ HTTP_PROXY: proxyUrl }, () =>
      h.refused({ url: s.url(h.withCanary('/a.tgz')), secrets: [secret] }, 'E_HTTP_STATUS'),
    );
    expect(proxy.requests).toHaveLength(1);
  });

  it('truncation through the proxy is still E_TRUNCATED', async () => {
    const s = await serving('/a.tgz', truncate(ARCHIVE, { declaredLength: ARCHIVE.length, sendBytes: 40 }));
    const proxy = await h.proxy();
    await withProxyEnv({ HTTP_PROXY: proxy.url }, () =>
      h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TRUNCATED'),
    );
  });

  it('an unreachable proxy with credentials → E_NETWORK, credentials never leak', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    const port = await closedPort();
    const secret = `PROXYPASS-${h.canary}`;
    await withProxyEnv({ HTTP_PROXY: `http://user:${secret}@127.0.0.1:${port}` }, () =>
      h.refused({ url: s.url(h.withCanary('/a.tgz')), secrets: [secret] }, 'E_NETWORK'),
    );
    expect(s.requests).toEqual([]);
  });
});

describe('B headers the client sends', () => {
  it('asks for identity encoding and sends no credentials of its own', async () => {
    const s = await serving('/a.tgz', serve(ARCHIVE));
    await h.fetched(
      { url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST, source: new AxiosArtifactSource({ headerTimeoutMs: 500 }) },
      PAYLOAD,
    );
    const sent = s.requests[0]?.headers;
    expect(sent?.['accept-encoding']).toBe('identity');
    expect(sent?.authorization).toBeUndefined();
    expect(sent?.cookie).toBeUndefined();
  });
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
