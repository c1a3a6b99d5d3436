import { createGunzip, crc32, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  concatenatedGzip,
  crc32Zeros,
  endlessGzip,
  gzip,
  gzipBomb,
  gzipWithTrailing,
  notGzipSamples,
  tarHeader,
  truncatedGzip,
} from '../support/archive/index.js';
import { tool } from './helpers.js';

const text = 'the quick brown fox jumps over the lazy dog\n'.repeat(200);

/** Inflate at most `limit` bytes of `gz` with a streaming gunzip; memory stays bounded. */
function inflatePrefix(gz: Uint8Array, limit: number): Promise<{ out: Buffer; error: Error | undefined }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let n = 0;
    const z = createGunzip();
    const done = (error?: Error): void => {
      z.destroy();
      resolve({ out: Buffer.concat(parts).subarray(0, limit), error });
    };
    z.on('data', (c: Buffer) => {
      if (n < limit) parts.push(c);
      n += c.length;
      if (n >= limit) done();
    });
    z.on('error', done);
    z.on('end', () => done());
    z.end(gz);
  });
}

describe('gzip', () => {
  it('is one deterministic member that gzip -t and node accept', () => {
    const gz = gzip(text);
    expect(gz).toEqual(gzip(text)); // mtime 0: stable bytes, stable SHA-256
    expect([...gz.subarray(0, 3)]).toEqual([0x1f, 0x8b, 8]);
    expect(tool('gzip', ['-t'], gz).status).toBe(0);
    expect(gunzipSync(gz).toString()).toBe(text);
  });

  it('concatenatedGzip: both gzip and node silently decode every member', () => {
    const gz = concatenatedGzip('first|', 'second|', 'third');
    expect(tool('gzip', ['-t'], gz).status).toBe(0);
    expect(tool('gzip', ['-dc'], gz).stdout).toBe('first|second|third');
    expect(gunzipSync(gz).toString()).toBe('first|second|third');
  });

  it('gzipWithTrailing: zero padding passes everywhere; garbage is a gzip warning and a node error', () => {
    const zeros = gzipWithTrailing(text, new Uint8Array(100));
    expect(tool('gzip', ['-t'], zeros).status).toBe(0);
    expect(gunzipSync(zeros).toString()).toBe(text);
    const garbage = gzipWithTrailing(text, 'garbage\n');
    const r = tool('gzip', ['-t'], garbage);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('trailing garbage ignored');
    expect(() => gunzipSync(garbage)).toThrow(/incorrect header check/);
    expect(() => gunzipSync(gzipWithTrailing(text, Uint8Array.of(0x1f, 0x8b, 1, 2)))).toThrow();
  });

  it.each(['in-deflate', 'in-trailer'] as const)('truncatedGzip %s fails gzip -t and node', (cut) => {
    const whole = gzip(text);
    const gz = truncatedGzip(text, cut);
    expect(gz.length).toBeLessThan(whole.length);
    if (cut === 'in-trailer') expect(gz.length).toBe(whole.length - 4);
    const r = tool('gzip', ['-t'], gz);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unexpected end of file');
    expect(() => gunzipSync(gz)).toThrow(/unexpected end of file/);
  });
});

describe('gzipBomb', () => {
  it('crc32Zeros agrees with zlib', () => {
    for (const n of [0, 1, 2, 1000, (1 << 20) + 5]) expect(crc32Zeros(n)).toBe(crc32(new Uint8Array(n)));
  });

  it('a small bomb is an exact, valid member of zeros', () => {
    const n = 3 * (1 << 20) + 77;
    const bomb = gzipBomb(n);
    expect(tool('gzip', ['-t'], bomb).status).toBe(0);
    const out = gunzipSync(bomb);
    expect(out.equals(Buffer.alloc(n))).toBe(true);
  });

  it('128 MiB of zeros costs ~128 KiB and gzip -t verifies the CRC and length', () => {
    const n = 128 * 1024 * 1024 + 1;
    const bomb = gzipBomb(n);
    expect(bomb.length).toBeLessThan(150 * 1024);
    expect(tool('gzip', ['-t'], bomb).status).toBe(0);
  });

  it('a 10 GiB bomb builds in well under a second, ~10 MiB, and starts inflating to zeros', async () => {
    const n = 10 * 1024 ** 3;
    const t0 = Date.now();
    const bomb = gzipBomb(n);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(bomb.length).toBeLessThan(11 * 1024 * 1024);
    const isize = new DataView(bomb.buffer, bomb.byteOffset, bomb.length).getUint32(bomb.length - 4, true);
    expect(isize).toBe(n % 2 ** 32);
    const { out, error } = await inflatePrefix(bomb, 16 * 1024 * 1024);
    expect(error).toBeUndefined();
    expect(out.equals(Buffer.alloc(16 * 1024 * 1024))).toBe(true);
  });
});

describe('endlessGzip', () => {
  it('is a valid gzip prefix forever: inflates to the prefix then fill, never ends', async () => {
    const prefix = tarHeader({ name: 'aks-flex-node-linux-amd64', size: 2 ** 40 });
    const gen = endlessGzip({ prefix, fill: 0x41 });
    const parts: Uint8Array[] = [];
    for (let total = 0; total < 300_000;) {
      const next = gen.next();
      if (next.done) throw new Error('endlessGzip ended');
      parts.push(next.value);
      total += next.value.length;
    }
    const gz = Buffer.concat(parts);
    const { out, error } = await inflatePrefix(gz, 200_000);
    expect(error).toBeUndefined();
    expect(out.subarray(0, 512).equals(Buffer.from(prefix))).toBe(true);
    expect(out.subarray(512).every((b) => b === 0x41)).toBe(true);
    expect(tool('gzip', ['-t'], gz).stderr).toContain('unexpected end of file');
  });
});

describe('notGzipSamples', () => {
  const samples = notGzipSamples();
  it('carry the advertised magic numbers', () => {
    const hex = (b: Uint8Array, n: number) => Buffer.from(b.subarray(0, n)).toString('hex');
    expect(hex(samples.zstd, 4)).toBe('28b52ffd');
    expect(hex(samples.xz, 6)).toBe('fd377a585a00');
    expect(hex(samples.zip, 4)).toBe('504b0304');
    expect(Buffer.from(samples.bzip2.subarray(0, 3)).toString()).toBe('BZh');
    expect(Buffer.from(samples.plainTar.subarray(257, 262)).toString()).toBe('ustar');
    expect(Buffer.from(samples.html).toString()).toContain('<html>');
    expect(samples.empty.length).toBe(0);
  });

  it.each(Object.keys(notGzipSamples()) as (keyof ReturnType<typeof notGzipSamples>)[])(
    '%s is rejected by gzip -t and by node',
    (key) => {
      expect(tool('gzip', ['-t'], samples[key]).status).toBe(1);
      expect(() => gunzipSync(samples[key])).toThrow();
    },
  );

  it('the plain tar is a real tar GNU tar can list', () => {
    expect(tool('tar', ['-tf', '-'], samples.plainTar).stdout).toBe('aks-flex-node-linux-amd64\n');
  });
});
