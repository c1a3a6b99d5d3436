import { describe, expect, it } from 'vitest';
import {
  BLOCK,
  bytes,
  gnuLongName,
  gzip,
  headerChecksum,
  hugePaxHeader,
  manyRecordPaxHeader,
  paxHeader,
  paxRecord,
  releaseArchive,
  tarArchive,
  tarAttacks,
  tarEntry,
  tarHeader,
  truncatedEntry,
} from '../support/archive/index.js';
import { tool } from './helpers.js';

// System GNU tar is the reference reader: if it sees what a builder claims, the bytes are right.
const MEMBER = 'aks-flex-node-linux-amd64';
const attacks = tarAttacks(MEMBER);
const list = (tar: Uint8Array) => tool('tar', ['-tvf', '-'], tar);
const lines = (out: string) => out.split('\n').filter((l) => l !== '');

describe('releaseArchive (the good case)', () => {
  it('is one gzip member holding exactly one regular 0755 file with the content', () => {
    const archive = releaseArchive(MEMBER, 'binary bytes\n');
    expect(tool('gzip', ['-t'], archive).status).toBe(0);
    const r = tool('tar', ['-tvzf', '-'], archive);
    expect(r.status).toBe(0);
    expect(lines(r.stdout)).toHaveLength(1);
    expect(r.stdout).toMatch(new RegExp(`^-rwxr-xr-x root/root +13 .* ${MEMBER}\\n$`));
    expect(tool('tar', ['-xzOf', '-'], archive).stdout).toBe('binary bytes\n');
    expect(r.stderr).toBe('');
  });
});

describe('tarEntry / tarHeader', () => {
  it('writes a 512-byte ustar header with a valid checksum and pads the body', () => {
    const entry = tarEntry({ name: 'f', mode: 0o640 }, 'abc');
    expect(entry.length).toBe(2 * BLOCK);
    const header = entry.subarray(0, BLOCK);
    expect(Buffer.from(header.subarray(257, 265)).toString('latin1')).toBe('ustar\u000000');
    expect(Buffer.from(header.subarray(100, 108)).toString('latin1')).toBe('0000640\0');
    const stored = parseInt(Buffer.from(header.subarray(148, 154)).toString('latin1'), 8);
    expect(stored).toBe(headerChecksum(header));
    expect(entry.subarray(BLOCK + 3).every((b) => b === 0)).toBe(true);
  });

  it("checksum 'corrupt' is off by one and GNU tar refuses it", () => {
    const h = tarHeader({ name: 'f', checksum: 'corrupt' });
    expect(parseInt(Buffer.from(h.subarray(148, 154)).toString('latin1'), 8)).toBe(headerChecksum(h) + 1);
    const r = list(attacks.badChecksum);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('This does not look like a tar archive');
  });

  it('refuses to silently truncate long names and encodes huge sizes in base-256', () => {
    expect(() => tarHeader({ name: 'x'.repeat(101) })).toThrow(RangeError);
    const huge = 2 ** 34; // beyond 11 octal digits
    const h = tarHeader({ name: 'big', size: huge });
    expect(h[124]).toBe(0x80);
    const r = list(tarArchive([truncatedEntry({ name: 'big', size: huge }, 'x')], { endBlocks: 0 }));
    expect(r.stdout).toContain(` ${huge} `);
    expect(r.stderr).toContain('Unexpected EOF');
  });

  it('applies raw patches before the checksum (malformed fields stay "valid")', () => {
    const h = tarHeader({ name: 'f', patch: [{ offset: 124, bytes: '0000000001z\0' }] });
    expect(Buffer.from(h.subarray(124, 136)).toString('latin1')).toBe('0000000001z\0');
    expect(parseInt(Buffer.from(h.subarray(148, 154)).toString('latin1'), 8)).toBe(headerChecksum(h));
  });

  it('puts end blocks and trailing bytes exactly where asked', () => {
    const e = tarEntry({ name: 'f' }, 'x');
    expect(tarArchive([e]).length).toBe(e.length + 2 * BLOCK);
    expect(tarArchive([e], { endBlocks: 0 }).length).toBe(e.length);
    expect(tarArchive([e], { endBlocks: 1, trailing: bytes('junk') }).length).toBe(e.length + BLOCK + 4);
    expect(list(attacks.oneEndBlock).stderr).toContain('A lone zero block');
  });
});

describe('entry types as GNU tar lists them', () => {
  it.each([
    ['symlinkAbsolute', 'l', `${MEMBER} -> /etc/shadow`],
    ['symlinkRelative', 'l', `${MEMBER} -> ../../bin/sh`],
    ['hardlinkAbsolute', 'h', `${MEMBER} link to etc/shadow`],
    ['directory', 'd', MEMBER],
    ['charDevice', 'c', MEMBER],
    ['blockDevice', 'b', MEMBER],
    ['fifo', 'p', MEMBER],
    ['contiguous', 'C', MEMBER],
    ['typeflagNul', '-', MEMBER],
    ['unknownType', '?', `${MEMBER} unknown file type`],
    ['trailingSlash', 'd', `${MEMBER}/`],
  ] as const)('%s lists as %s', (key, kind, suffix) => {
    const r = list(attacks[key]);
    expect(r.stdout.startsWith(kind)).toBe(true);
    expect(r.stdout).toContain(suffix);
    expect(lines(r.stdout)).toHaveLength(1);
  });

  it('the hardlink-to-earlier case lists the decoy then a link to it', () => {
    const out = lines(list(attacks.hardlinkToEarlier).stdout);
    expect(out).toHaveLength(2);
    expect(out[1]).toMatch(/^h.* link to decoy$/);
  });

  it('duplicate and extra entries list twice; otherArchOnly has no exact member', () => {
    expect(lines(list(attacks.duplicate).stdout).filter((l) => l.endsWith(` ${MEMBER}`))).toHaveLength(2);
    expect(lines(list(attacks.extraEntry).stdout)).toHaveLength(2);
    expect(lines(list(attacks.otherArchOnly).stdout).some((l) => l.endsWith(` ${MEMBER}`))).toBe(false);
  });

  it('hostile names reach the reader verbatim (GNU tar only strips them on extraction)', () => {
    expect(list(attacks.absolute).stdout).toContain(` /${MEMBER}`);
    expect(list(attacks.manySlashes).stdout).toContain(` ////${MEMBER}`);
    expect(list(attacks.dotDot).stdout).toContain(` ../${MEMBER}`);
    expect(list(attacks.driveRelative).stdout).toContain(` C:${MEMBER}`);
    expect(list(attacks.backslash).stdout).toContain(` bin\\\\${MEMBER}`); // tar escapes the backslash
    expect(list(attacks.nulInName).stdout).toMatch(new RegExp(` ${MEMBER}\\n$`));
  });

  it('empty and truncated members', () => {
    expect(list(attacks.empty).stdout).toMatch(/ 0 .* aks-flex-node-linux-amd64\n$/);
    for (const key of ['truncated', 'oversizeDeclared'] as const) {
      const r = list(attacks[key]);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('Unexpected EOF in archive');
    }
    expect(list(attacks.oversizeDeclared).stdout).toContain(` ${257 * 1024 * 1024} `);
  });

  it('a garbage block after the member is an error to GNU tar; data after the end marker is not', () => {
    expect(list(attacks.garbageBlock).status).toBe(2);
    expect(list(attacks.trailingGarbage).status).toBe(0);
  });
});

describe('PAX and GNU extensions', () => {
  it('paxRecord length prefixes count themselves, across digit roll-overs', () => {
    for (let n = 0; n < 1200; n += 7) {
      const rec = paxRecord('comment', 'v'.repeat(n));
      expect(Number(rec.split(' ')[0])).toBe(Buffer.byteLength(rec));
    }
    expect(paxRecord('path', 'é')).toBe('11 path=é\n'); // 'é' is 2 bytes: counted in bytes
  });

  it('GNU tar honours PAX path and size overrides, GNU L long names and PAX global headers', () => {
    const longName = `dir/${'n'.repeat(180)}`;
    expect(list(tarArchive([gnuLongName(longName), tarEntry({ name: 'short' }, 'x')])).stdout).toContain(
      ` ${longName}\n`,
    );
    expect(list(attacks.gnuLongNameDecoy).stdout).toContain(` ${MEMBER}\n`);
    expect(list(attacks.paxPathOverride).stdout).toContain(` ${MEMBER}\n`);
    expect(list(attacks.paxGlobalPath).stdout).toContain(` ${MEMBER}\n`);
    const sized = list(attacks.paxSizeOverride);
    expect(sized.stdout).toMatch(/ 0 .* aks-flex-node-linux-amd64\n/);
    expect(sized.status).toBe(2); // the real data is then read as a header
    // GNU tar applies a PAX size preceding an `L` header to the real entry (512, not 26).
    expect(list(attacks.paxSizeBeforeLongName).stdout).toMatch(/ 512 .* aks-flex-node-linux-amd64\n/);
    expect(list(tarArchive([paxHeader({ path: 'p' }), tarEntry({ name: 'q' })])).stdout).toContain(' p\n');
  });

  it('a malformed PAX length prefix is rejected by GNU tar', () => {
    const r = list(attacks.paxMalformedLength);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('out of range');
  });

  it.each(['gnuSparse', 'paxSparse', 'paxSparseRecords'] as const)(
    '%s is a sparse file to GNU tar: real size, member name, holes expanded',
    (key) => {
      const r = list(attacks[key]);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/ 4122 .* aks-flex-node-linux-amd64\n$/);
      if (key === 'paxSparseRecords') return; // 0.0 records on a plain entry: listing only
      const data = Buffer.from(tool('tar', ['-xOf', '-'], attacks[key]).stdout, 'latin1');
      expect(data.length).toBe(4122);
      expect(data.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
      expect(data.subarray(26).every((b) => b === 0)).toBe(true);
    },
  );

  it('huge and many-record PAX headers have exactly the requested body size', () => {
    const huge = hugePaxHeader(1024 * 1024);
    expect(parseInt(Buffer.from(huge.subarray(124, 135)).toString('latin1'), 8)).toBe(1024 * 1024);
    expect(list(tarArchive([huge, tarEntry({ name: 'f' }, 'x')])).status).toBe(0);
    const many = manyRecordPaxHeader(100_000);
    expect(parseInt(Buffer.from(many.subarray(124, 135)).toString('latin1'), 8)).toBe(800_000);
  });

  it('every catalogue entry also survives gzip as a single valid member', () => {
    for (const tar of Object.values(attacks)) expect(tool('gzip', ['-t'], gzip(tar)).status).toBe(0);
  });
});
