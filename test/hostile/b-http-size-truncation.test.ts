import { describe, expect, it } from 'vitest';
import { concatBytes, endlessGzip, tarHeader } from '../support/archive/index.js';
import { endless, serve, stallAfter, truncate } from '../support/http/hostile-server.js';
import { ARCHIVE, BIG, DIGEST, ROOMY, servingWith } from './b-http-fixtures.js';
import { eventually, MEMBER, PAYLOAD, useHarness } from './harness.js';

/**
 * Category B: the HTTP transport lies, stalls, redirects and downgrades.
 * Here: bodies too large, endless, short or long.
 */

const h = useHarness();
const serving = servingWith(h);

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
