import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AxiosArtifactSource } from '../../src/adapters/common/http/axios-artifact-source.js';
import { gzip, releaseArchive, releaseTar, sha256Hex } from '../support/archive/index.js';
import { serve, status, truncate } from '../support/http/hostile-server.js';
import { ARCHIVE, DIGEST, servingWith } from './b-http-fixtures.js';
import { MEMBER, OTHER_MEMBER, PAYLOAD, useHarness } from './harness.js';

/**
 * Category B: the HTTP transport lies, stalls, redirects and downgrades.
 * Here: encodings, error pages, digests, proxies and the headers the client sends.
 */

const h = useHarness();
const serving = servingWith(h);

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
