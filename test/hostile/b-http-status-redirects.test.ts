import { describe, expect, it } from 'vitest';
import { type Behaviour, redirect, serve, status } from '../support/http/hostile-server.js';
import { ARCHIVE, DIGEST, servingWith } from './b-http-fixtures.js';
import { PAYLOAD, useHarness } from './harness.js';

/**
 * Category B: the HTTP transport lies, stalls, redirects and downgrades.
 * Here: status codes and redirects.
 */

const h = useHarness();
const serving = servingWith(h);

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
