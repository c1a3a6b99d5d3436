import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import {
  bytes,
  concatBytes,
  concatenatedGzip,
  endlessGzip,
  gzip,
  gzipBomb,
  gzipWithTrailing,
  notGzipSamples,
  releaseTar,
  sha256Hex,
  tarHeader,
  truncatedGzip,
} from '../support/archive/index.js';
import { endless, serve } from '../support/http/hostile-server.js';
import { type ArtifactConfig, MEMBER, PAYLOAD, useHarness } from './harness.js';

/**
 * Category C: the gzip layer. Each body is served honestly over http with
 * its own correct SHA-256, so the gzip defect is the only thing wrong with it.
 */

const h = useHarness();
const TAR = releaseTar(MEMBER, PAYLOAD);
const GOOD = gzip(TAR);

async function refusedBody(
  body: Uint8Array,
  code: ErrorCode,
  artifact: Partial<ArtifactConfig> = {},
  withinMs?: number,
): Promise<void> {
  const s = await h.server();
  s.route('/a.tgz', serve(body));
  await h.refused(
    {
      url: s.url(h.withCanary('/a.tgz')),
      sha256: sha256Hex(body),
      artifact,
      ...(withinMs === undefined ? {} : { withinMs }),
    },
    code,
  );
}

/** Flips bits of one byte at `at` (negative: from the end). */
function corrupt(data: Uint8Array, at: number, mask = 0xff): Uint8Array {
  const copy = data.slice();
  const i = at < 0 ? copy.length + at : at;
  copy[i] = (copy[i] ?? 0) ^ mask;
  return copy;
}

describe('C30 decompression bombs → E_TOO_LARGE, fast', () => {
  // 1 GiB of zeros in ~1 MiB; the inflated cap is 2 × maxBinaryBytes = 512 KiB here.
  it('a 1 GiB gzip bomb is stopped at the decompressed cap within a second', async () => {
    await refusedBody(gzipBomb(1024 ** 3), 'E_TOO_LARGE', { maxArchiveBytes: 4 * 1024 * 1024 }, 1000);
  });

  it('a 64 MiB bomb under the default binary cap of this suite', async () => {
    await refusedBody(gzipBomb(64 * 1024 * 1024), 'E_TOO_LARGE', {}, 1000);
  });

  it('a bomb whose tar header names the member (the stream looks valid to the end)', async () => {
    // One member: the header of a member as large as the binary cap allows, then endless zeros.
    const header = tarHeader({ name: MEMBER, mode: 0o755, size: 256 * 1024 });
    const prefix = gzip(concatBytes(header, new Uint8Array(4 * 1024 * 1024)));
    await refusedBody(prefix, 'E_TOO_LARGE', {}, 1000);
  });

  it('an endless chunked gzip stream is stopped (compressed or decompressed cap)', async () => {
    const s = await h.server();
    s.route(
      '/a.tgz',
      endless({
        chunkBytes: 16 * 1024,
        source: () => endlessGzip({ prefix: tarHeader({ name: MEMBER, mode: 0o755, size: 200 * 1024 }) }),
      }),
    );
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), artifact: { maxArchiveBytes: 512 * 1024 }, withinMs: 2000 },
      'E_TOO_LARGE',
    );
  });
});

describe('C31 gzip cut short → E_TRUNCATED', () => {
  const whole = GOOD.length;
  it.each([
    ['inside the deflate data', truncatedGzip(TAR, 'in-deflate')],
    ['inside the 8-byte trailer', truncatedGzip(TAR, 'in-trailer')],
    ['right after the 10-byte header', truncatedGzip(TAR, { keepBytes: 10 })],
    ['without any trailer', truncatedGzip(TAR, { keepBytes: whole - 8 })],
    ['one byte short', truncatedGzip(TAR, { keepBytes: whole - 1 })],
    ['after the first deflate byte', truncatedGzip(TAR, { keepBytes: 11 })],
  ])('%s', async (_name, body) => {
    await refusedBody(body, 'E_TRUNCATED');
  });

  it('an empty body (zero bytes) → E_TRUNCATED', async () => {
    await refusedBody(new Uint8Array(0), 'E_TRUNCATED');
  });
});

describe('C33 anything after the one gzip member → E_ARCHIVE_FORMAT', () => {
  it.each([
    ['non-zero garbage', gzipWithTrailing(TAR, 'GARBAGE after the member\n')],
    ['one zero byte', gzipWithTrailing(TAR, new Uint8Array(1))],
    ['512 zero bytes of padding', gzipWithTrailing(TAR, new Uint8Array(512))],
    ['a second member with another tar', concatenatedGzip(TAR, releaseTar(MEMBER, '#!/bin/sh\necho evil\n'))],
    ['a second, empty member', concatenatedGzip(TAR, '')],
    ['a lone second gzip magic', gzipWithTrailing(TAR, Uint8Array.of(0x1f, 0x8b))],
    ['the whole archive again (a doubled upload)', concatBytes(GOOD, GOOD)],
  ])('%s', async (_name, body) => {
    await refusedBody(body, 'E_ARCHIVE_FORMAT');
  });
});

describe('C35 not gzip at all → E_ARCHIVE_FORMAT on the magic', () => {
  const samples = notGzipSamples(MEMBER);
  const rows = (Object.keys(samples) as (keyof typeof samples)[]).filter((k) => k !== 'empty');
  it.each(rows)('%s', async (name) => {
    await refusedBody(samples[name], 'E_ARCHIVE_FORMAT');
  });

  it('the empty sample → E_TRUNCATED', async () => {
    await refusedBody(samples.empty, 'E_TRUNCATED');
  });
});

describe('C corrupt gzip members → E_ARCHIVE_FORMAT', () => {
  it.each([
    ['a wrong CRC-32 in the trailer', corrupt(GOOD, -8)],
    ['a wrong ISIZE in the trailer', corrupt(GOOD, -1, 0x01)],
    ['corrupt deflate data', corrupt(GOOD, 12, 0x5a)],
    ['reserved header flag bits set', corrupt(GOOD, 3, 0xe0)],
    ['an invalid deflate block type', concatBytes(GOOD.subarray(0, 10), Uint8Array.of(0x07), new Uint8Array(64))],
    [
      'an FNAME header field that never ends',
      concatBytes(Uint8Array.of(0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0xff), new Uint8Array(70 * 1024).fill(0x41)),
    ],
  ])('%s', async (_name, body) => {
    await refusedBody(body, 'E_ARCHIVE_FORMAT');
  });
});

describe('C controls', () => {
  it('an FNAME header field and mtime are fine (valid RFC 1952)', async () => {
    const header = Uint8Array.of(0x1f, 0x8b, 0x08, 0x08, 1, 2, 3, 4, 0x02, 0x03);
    const body = concatBytes(header, bytes('agent.tar\0'), GOOD.subarray(10));
    const s = await h.server();
    s.route('/a.tgz', serve(body));
    await h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: sha256Hex(body) }, PAYLOAD);
    expect(s.requests).toHaveLength(1);
  });
});
