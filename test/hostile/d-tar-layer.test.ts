import { describe, it } from 'vitest';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import {
  bytes,
  concatBytes,
  gzip,
  hugePaxHeader,
  paxHeader,
  rawPaxHeader,
  releaseArchive,
  sha256Hex,
  type TarAttacks,
  tarArchive,
  tarAttacks,
  tarEntry,
} from '../support/archive/index.js';
import { serve } from '../support/http/hostile-server.js';
import { type ArtifactConfig, MEMBER, OTHER_MEMBER, PAYLOAD, useHarness } from './harness.js';

/**
 * Category D: the tar layer. Every tar is gzipped correctly and served
 * honestly with its correct SHA-256, so the tar trick is the only thing wrong.
 */

const h = useHarness();

async function refusedTar(tar: Uint8Array, code: ErrorCode, artifact: Partial<ArtifactConfig> = {}): Promise<void> {
  const archive = gzip(tar);
  const s = await h.server();
  s.route('/a.tgz', serve(archive));
  await h.refused({ url: s.url(h.withCanary('/a.tgz')), sha256: sha256Hex(archive), artifact }, code);
}

async function fetchedTar(
  tar: Uint8Array,
  expected: Uint8Array,
  artifact: Partial<ArtifactConfig> = {},
): Promise<void> {
  const archive = gzip(tar);
  const s = await h.server();
  s.route('/a.tgz', serve(archive));
  await h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: sha256Hex(archive), artifact }, expected);
}

const file = (name: string, body: Uint8Array | string = PAYLOAD): Uint8Array => tarEntry({ name, mode: 0o755 }, body);

/**
 * Every `tarAttacks` entry with the code the archive rules call for. Names that are not the member
 * (or are unsafe) are E_ARCHIVE_MEMBER; the member with a non-regular type is
 * E_ARCHIVE_MEMBER_TYPE; a size out of bounds is E_ARCHIVE_MEMBER_SIZE; a broken or ambiguous tar
 * stream is E_ARCHIVE_FORMAT; a tar stream that ends inside an entry is E_TRUNCATED.
 */
const EXPECTED: Readonly<Partial<Record<keyof TarAttacks, ErrorCode>>> = {
  symlinkAbsolute: 'E_ARCHIVE_MEMBER_TYPE',
  symlinkRelative: 'E_ARCHIVE_MEMBER_TYPE',
  hardlinkAbsolute: 'E_ARCHIVE_MEMBER_TYPE',
  hardlinkToEarlier: 'E_ARCHIVE_MEMBER',
  directory: 'E_ARCHIVE_MEMBER_TYPE',
  charDevice: 'E_ARCHIVE_MEMBER_TYPE',
  blockDevice: 'E_ARCHIVE_MEMBER_TYPE',
  fifo: 'E_ARCHIVE_MEMBER_TYPE',
  contiguous: 'E_ARCHIVE_MEMBER_TYPE',
  unknownType: 'E_ARCHIVE_MEMBER_TYPE',
  gnuSparse: 'E_ARCHIVE_MEMBER_TYPE',
  paxSparse: 'E_ARCHIVE_FORMAT',
  paxSparseRecords: 'E_ARCHIVE_FORMAT',
  absolute: 'E_ARCHIVE_MEMBER',
  manySlashes: 'E_ARCHIVE_MEMBER',
  driveRelative: 'E_ARCHIVE_MEMBER',
  dotDot: 'E_ARCHIVE_MEMBER',
  dotSlash: 'E_ARCHIVE_MEMBER',
  backslash: 'E_ARCHIVE_MEMBER',
  trailingSlash: 'E_ARCHIVE_MEMBER',
  duplicate: 'E_ARCHIVE_MEMBER',
  extraEntry: 'E_ARCHIVE_MEMBER',
  otherArchOnly: 'E_ARCHIVE_MEMBER',
  empty: 'E_ARCHIVE_MEMBER_SIZE',
  oversizeDeclared: 'E_ARCHIVE_MEMBER_SIZE',
  truncated: 'E_TRUNCATED',
  badChecksum: 'E_ARCHIVE_FORMAT',
  garbageBlock: 'E_ARCHIVE_FORMAT',
  trailingGarbage: 'E_ARCHIVE_FORMAT',
  paxSizeOverride: 'E_ARCHIVE_FORMAT',
  paxSizeBeforeLongName: 'E_ARCHIVE_FORMAT',
  paxMalformedLength: 'E_ARCHIVE_FORMAT',
  paxGlobalPath: 'E_ARCHIVE_FORMAT',
  // GNU/PAX tricks: the name depends on whether the reader applies the extension.
  paxPathOverride: 'E_ARCHIVE_FORMAT',
  gnuLongNameDecoy: 'E_ARCHIVE_FORMAT',
};

describe('D every tarAttacks entry is refused with its code', () => {
  const attacks = tarAttacks(MEMBER);
  const rows = Object.entries(EXPECTED) as [keyof TarAttacks, ErrorCode][];
  it.each(rows)('%s → %s', async (name, code) => {
    // oversizeDeclared is 257 MiB against the production 256 MiB binary cap.
    await refusedTar(
      attacks[name],
      code,
      name === 'oversizeDeclared' ? { maxBinaryBytes: 256 * 1024 * 1024, maxArchiveBytes: 256 * 1024 * 1024 } : {},
    );
  });
});

describe('D36/D37/D50 the member as a non-regular entry, whatever it points at', () => {
  it.each([
    [
      "a symlink to the agent's own slot",
      tarEntry({ name: MEMBER, type: 'symlink', linkname: '/usr/local/bin/aks-flex-node' }),
    ],
    ['a symlink to itself', tarEntry({ name: MEMBER, type: 'symlink', linkname: MEMBER })],
    ['a hardlink to a relative outside path', tarEntry({ name: MEMBER, type: 'link', linkname: '../../etc/passwd' })],
    [
      'a hardlink carrying data',
      tarEntry({ name: MEMBER, type: 'link', linkname: 'x', size: PAYLOAD.length }, PAYLOAD),
    ],
    [
      'a directory with a trailing-slash-free name and data',
      tarEntry({ name: MEMBER, type: 'directory', size: PAYLOAD.length }, PAYLOAD),
    ],
    ['/dev/null as a char device', tarEntry({ name: MEMBER, type: 'char', devmajor: 1, devminor: 3 })],
  ])('%s → E_ARCHIVE_MEMBER_TYPE', async (_name, entry) => {
    await refusedTar(tarArchive([entry]), 'E_ARCHIVE_MEMBER_TYPE');
  });
});

describe('D39/D41/D52 names that are not exactly the member → E_ARCHIVE_MEMBER', () => {
  it.each([
    ["only the other architecture's member", OTHER_MEMBER],
    ['upper case', MEMBER.toUpperCase()],
    ['a trailing space', `${MEMBER} `],
    ['a directory prefix', `bin/${MEMBER}`],
    ['a "./" and "//" mix', `.//${MEMBER}`],
    ['a look-alike Unicode hyphen', MEMBER.replace('-', '\u2010')],
    ['a control character', `${MEMBER}\u0001`],
    ['"C:..\\"', `C:..\\${MEMBER}`],
    ['"..\\" (Windows parent)', `..\\${MEMBER}`],
  ])('%s', async (_name, name) => {
    await refusedTar(tarArchive([file(name)]), 'E_ARCHIVE_MEMBER');
  });

  it("both architectures' members (the right one second)", async () => {
    await refusedTar(tarArchive([file(OTHER_MEMBER), file(MEMBER)]), 'E_ARCHIVE_MEMBER');
  });

  it('the member, then a directory entry', async () => {
    await refusedTar(tarArchive([file(MEMBER), tarEntry({ name: 'etc/', type: 'directory' })]), 'E_ARCHIVE_MEMBER');
  });

  it('the member, then a symlink entry', async () => {
    await refusedTar(
      tarArchive([file(MEMBER), tarEntry({ name: 'link', type: 'symlink', linkname: '/etc/shadow' })]),
      'E_ARCHIVE_MEMBER',
    );
  });

  it('an empty archive (only the end blocks)', async () => {
    await refusedTar(tarArchive([]), 'E_ARCHIVE_MEMBER');
  });

  it('a PAX header whose path makes an unsafe name (PAX path records are refused outright)', async () => {
    await refusedTar(tarArchive([paxHeader({ path: `../${MEMBER}` }), file(MEMBER)]), 'E_ARCHIVE_FORMAT');
  });
});

describe('D48 member size bounds → E_ARCHIVE_MEMBER_SIZE', () => {
  it('one byte over maxBinaryBytes', async () => {
    await refusedTar(tarArchive([file(MEMBER, new Uint8Array(4097).fill(0x41))]), 'E_ARCHIVE_MEMBER_SIZE', {
      maxBinaryBytes: 4096,
    });
  });

  it('a header declaring 8 GiB in base-256 with little data after it (base-256 sizes are refused)', async () => {
    await refusedTar(
      tarArchive([tarEntry({ name: MEMBER, mode: 0o755, size: 8 * 1024 ** 3 }, PAYLOAD)], { endBlocks: 0 }),
      'E_ARCHIVE_FORMAT',
    );
  });

  it('a member of size 0 among other trickery-free headers', async () => {
    await refusedTar(tarArchive([tarEntry({ name: MEMBER, mode: 0o755, size: 0 })]), 'E_ARCHIVE_MEMBER_SIZE');
  });

  it.each([4096, 1024])('control: a member of exactly maxBinaryBytes (%i) is accepted', async (max) => {
    const body = new Uint8Array(max).fill(0x41);
    await fetchedTar(tarArchive([file(MEMBER, body)]), body, { maxBinaryBytes: max });
  });
});

describe('D45/D46/D53 broken or ambiguous tar streams', () => {
  it('a size field with garbage after its octal digits (GNU tar refuses it) → E_ARCHIVE_FORMAT', async () => {
    const size = `${PAYLOAD.length.toString(8).padStart(10, '0')}z\0`;
    await refusedTar(
      tarArchive([tarEntry({ name: MEMBER, mode: 0o755, patch: [{ offset: 124, bytes: size }] }, PAYLOAD)]),
      'E_ARCHIVE_FORMAT',
    );
  });

  it('a PAX record without its newline renames a decoy to the member (GNU tar: "decoy") → E_ARCHIVE_FORMAT', async () => {
    await refusedTar(tarArchive([rawPaxHeader(`99 path=${MEMBER}`), file('decoy')]), 'E_ARCHIVE_FORMAT');
  });

  it('a PAX header after the end-of-archive marker → E_ARCHIVE_FORMAT', async () => {
    await refusedTar(
      tarArchive([file(MEMBER)], { trailing: paxHeader({ comment: 'after the end' }, { global: true }) }),
      'E_ARCHIVE_FORMAT',
    );
  });

  it('a v7 header without the ustar magic → E_ARCHIVE_FORMAT', async () => {
    await refusedTar(tarArchive([tarEntry({ name: MEMBER, mode: 0o755, format: 'v7' }, PAYLOAD)]), 'E_ARCHIVE_FORMAT');
  });

  it('one block of random bytes → E_ARCHIVE_FORMAT', async () => {
    const block = new Uint8Array(512).map((_v, i) => (i * 131 + 7) & 0xff);
    await refusedTar(concatBytes(block, new Uint8Array(1024)), 'E_ARCHIVE_FORMAT');
  });

  it('a second archive appended after the end marker → E_ARCHIVE_FORMAT', async () => {
    await refusedTar(
      tarArchive([file(MEMBER)], { trailing: tarArchive([file(MEMBER, bytes('#!/bin/sh\necho evil\n'))]) }),
      'E_ARCHIVE_FORMAT',
    );
  });

  it('a PAX size record on the member itself → E_ARCHIVE_FORMAT', async () => {
    await refusedTar(tarArchive([paxHeader({ size: String(PAYLOAD.length) }), file(MEMBER)]), 'E_ARCHIVE_FORMAT');
  });

  it('a PAX header larger than the decompressed cap → E_ARCHIVE_FORMAT (PAX headers are bounded at 64 KiB)', async () => {
    await refusedTar(tarArchive([hugePaxHeader(2 * 1024 * 1024), file(MEMBER)]), 'E_ARCHIVE_FORMAT', {
      maxBinaryBytes: 256 * 1024,
    });
  });

  it("the member's data cut inside its last block → E_TRUNCATED", async () => {
    const whole = tarArchive([file(MEMBER, new Uint8Array(2000).fill(0x41))], { endBlocks: 0 });
    await refusedTar(whole.subarray(0, 512 + 1000), 'E_TRUNCATED');
  });
});

describe('D controls: the good case and the documented policy choices still pass', () => {
  it('one regular file named exactly the member', async () => {
    const archive = releaseArchive(MEMBER, PAYLOAD);
    const s = await h.server();
    s.route('/a.tgz', serve(archive));
    await h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: sha256Hex(archive) }, PAYLOAD);
  });

  const attacks = tarAttacks(MEMBER);
  const ELF = bytes('\x7fELF\x02\x01\x01\0fake agent binary\n');
  it.each([
    // A pre-POSIX regular file: GNU tar, Go and Python all read it as a regular file.
    ['typeflag NUL (old regular file)', attacks.typeflagNul],
    // Every reader stops the name at the NUL, so there is no differential to exploit.
    ['a NUL inside the name field after the member name', attacks.nulInName],
    // GNU tar accepts both (with a warning for the lone block); the gzip trailer still proves completeness.
    ['a single end block', attacks.oneEndBlock],
    ['no end blocks', attacks.noEndBlocks],
    // GNU tar pads archives with zeros to its 10 KiB record size.
    ['zero padding to a 10 KiB record', tarArchive([file(MEMBER, ELF)], { trailing: new Uint8Array(10240 - 2048) })],
  ])('policy: %s is accepted', async (_name, tar) => {
    await fetchedTar(tar, ELF);
  });
});
