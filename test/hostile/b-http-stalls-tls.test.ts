import { describe, expect, it } from 'vitest';
import { concatBytes } from '../support/archive/index.js';
import { redirect, serve, stallAfter, stallBeforeHeaders, trickle } from '../support/http/hostile-server.js';
import { type CertVariant } from '../support/http/tls-material.js';
import { ARCHIVE, DIGEST, servingWith } from './b-http-fixtures.js';
import { useHarness } from './harness.js';

/**
 * Category B: the HTTP transport lies, stalls, redirects and downgrades.
 * Here: stalls, trickles, black holes and TLS.
 */

const h = useHarness();
const serving = servingWith(h);

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
