import { describe, expect, it } from 'vitest';
import { parseGzipHeader } from '../../src/adapters/node/archive/gzip-header.js';

const header = (flags: number, ...rest: number[]): Uint8Array =>
  Uint8Array.from([0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 3, ...rest]);

describe('parseGzipHeader', () => {
  it.each([
    ['plain header', header(0), { kind: 'complete', length: 10 }],
    ['with a file name', header(0x08, 0x61, 0x62, 0), { kind: 'complete', length: 13 }],
    ['with a comment and a name', header(0x18, 0x61, 0, 0x62, 0), { kind: 'complete', length: 14 }],
    ['with an extra field', header(0x04, 2, 0, 0xaa, 0xbb), { kind: 'complete', length: 14 }],
    ['with a header CRC', header(0x02, 0x12, 0x34), { kind: 'complete', length: 12 }],
    ['only the magic so far', Uint8Array.from([0x1f, 0x8b]), { kind: 'incomplete' }],
    ['a name not yet terminated', header(0x08, 0x61, 0x62), { kind: 'incomplete' }],
    ['an extra field not yet complete', header(0x04, 9, 0, 1), { kind: 'incomplete' }],
    ['wrong first magic byte', Uint8Array.from([0x50, 0x4b, 3, 4]), { kind: 'invalid' }],
    ['wrong second magic byte', Uint8Array.from([0x1f, 0x00]), { kind: 'invalid' }],
    ['compression method other than deflate', Uint8Array.from([0x1f, 0x8b, 7]), { kind: 'invalid' }],
    ['reserved flags set', header(0x20), { kind: 'invalid' }],
  ])('%s', (_name, bytes, expected) => {
    expect(parseGzipHeader(bytes)).toMatchObject(expected);
  });

  it('refuses a name field longer than the header bound', () => {
    const long = new Uint8Array(70 * 1024).fill(0x61);
    expect(parseGzipHeader(Uint8Array.from([...header(0x08), ...long]))).toMatchObject({ kind: 'invalid' });
  });
});
