import { type Bytes, bytes, concatBytes } from './bytes.js';
import { BLOCK, tarArchive, tarEntry, truncatedEntry } from './tar.js';
import { gnuLongName, gnuSparseEntry, paxHeader, paxSparseEntry, rawPaxHeader } from './tar-extensions.js';

/**
 * Ready-made uncompressed tars for hostile-input category D (the tar layer), each built around
 * the expected member name so only the trick differs from the good case. gzip them with
 * `gzip()` before serving. Every one of these is something the archive rules reject (exactly one
 * entry, a regular file named exactly the member: docs/operations.md#fetch), unless marked
 * "policy" where the suite decides.
 */
export interface TarAttacks {
  readonly symlinkAbsolute: Uint8Array; // #36 member is a symlink to /etc/shadow
  readonly symlinkRelative: Uint8Array; // #36 … to ../../bin/sh
  readonly hardlinkAbsolute: Uint8Array; // #37 member is a hardlink to /etc/shadow
  readonly hardlinkToEarlier: Uint8Array; // #37 a decoy file, then member hardlinked to it
  readonly directory: Uint8Array; // #50
  readonly charDevice: Uint8Array; // #50
  readonly blockDevice: Uint8Array; // #50
  readonly fifo: Uint8Array; // #50
  readonly contiguous: Uint8Array; // policy: type '7' is "regular" to many readers
  readonly typeflagNul: Uint8Array; // policy: pre-POSIX regular file ('\0' typeflag)
  readonly unknownType: Uint8Array; // typeflag 'Z'
  readonly gnuSparse: Uint8Array; // #49 old GNU 'S'
  readonly paxSparse: Uint8Array; // #49 PAX 1.0: GNUSparseFile.0/<member>
  readonly paxSparseRecords: Uint8Array; // #49 GNU.sparse.* records on a plain-looking entry
  readonly absolute: Uint8Array; // #39 /member
  readonly manySlashes: Uint8Array; // #39 ////member
  readonly driveRelative: Uint8Array; // #39 C:member
  readonly dotDot: Uint8Array; // ../member
  readonly dotSlash: Uint8Array; // policy: ./member is not byte-equal to member
  readonly backslash: Uint8Array; // #41 bin\member
  readonly trailingSlash: Uint8Array; // member/ (a directory to old readers)
  readonly nulInName: Uint8Array; // "member\0.txt": C readers stop at NUL
  readonly duplicate: Uint8Array; // the member twice, different content
  readonly extraEntry: Uint8Array; // member plus README
  readonly otherArchOnly: Uint8Array; // #52 only a differently-named member
  readonly empty: Uint8Array; // #48 member of size 0
  readonly oversizeDeclared: Uint8Array; // #48 header says 257 MiB; little data follows
  readonly truncated: Uint8Array; // #46 declared size larger than the data
  readonly badChecksum: Uint8Array; // #53
  readonly garbageBlock: Uint8Array; // #53 a random block after the member, then end marker
  readonly trailingGarbage: Uint8Array; // data after the end-of-archive marker
  readonly oneEndBlock: Uint8Array; // policy: a lone zero block as the end marker
  readonly noEndBlocks: Uint8Array; // policy: archive ends right after the member
  readonly paxPathOverride: Uint8Array; // PAX path=member on a header named "decoy"
  readonly paxSizeOverride: Uint8Array; // PAX size=0: readers disagree where the next header is
  readonly paxSizeBeforeLongName: Uint8Array; // GHSA-vmf3-w455-68vh: PAX size then GNU 'L'
  readonly gnuLongNameDecoy: Uint8Array; // GNU 'L' = member on a header named "decoy"
  readonly paxGlobalPath: Uint8Array; // 'g' header carrying path=member
  readonly paxMalformedLength: Uint8Array; // #45 length prefix far beyond the record
}

const ELF = bytes('\x7fELF\x02\x01\x01\0fake agent binary\n');

function pseudoRandomBlock(seed: number): Uint8Array {
  const b = new Uint8Array(BLOCK);
  let x = seed;
  for (let i = 0; i < BLOCK; i++) b[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return b;
}

export function tarAttacks(member: string, content: Bytes = ELF): TarAttacks {
  const data = bytes(content);
  const file = (name: Bytes, body: Uint8Array = data): Uint8Array => tarEntry({ name, mode: 0o755 }, body);
  const one = (entry: Uint8Array): Uint8Array => tarArchive([entry]);
  const typed = (type: 'directory' | 'char' | 'block' | 'fifo' | 'contiguous'): Uint8Array =>
    one(
      tarEntry(
        { name: member, type, devmajor: type === 'char' || type === 'block' ? 1 : 0, devminor: 3 },
        type === 'contiguous' ? data : new Uint8Array(0),
      ),
    );
  return {
    symlinkAbsolute: one(tarEntry({ name: member, type: 'symlink', linkname: '/etc/shadow' })),
    symlinkRelative: one(tarEntry({ name: member, type: 'symlink', linkname: '../../bin/sh' })),
    hardlinkAbsolute: one(tarEntry({ name: member, type: 'link', linkname: '/etc/shadow' })),
    hardlinkToEarlier: tarArchive([file('decoy'), tarEntry({ name: member, type: 'link', linkname: 'decoy' })]),
    directory: typed('directory'),
    charDevice: typed('char'),
    blockDevice: typed('block'),
    fifo: typed('fifo'),
    contiguous: typed('contiguous'),
    typeflagNul: one(tarEntry({ name: member, typeflag: '\0', mode: 0o755 }, data)),
    unknownType: one(tarEntry({ name: member, typeflag: 'Z', mode: 0o755 }, data)),
    gnuSparse: one(gnuSparseEntry(member, data)),
    paxSparse: tarArchive([paxSparseEntry(member, data)]),
    paxSparseRecords: tarArchive([
      paxHeader([
        ['GNU.sparse.size', String(data.length + 4096)],
        ['GNU.sparse.numblocks', '1'],
        ['GNU.sparse.offset', '0'],
        ['GNU.sparse.numbytes', String(data.length)],
      ]),
      file(member),
    ]),
    absolute: one(file(`/${member}`)),
    manySlashes: one(file(`////${member}`)),
    driveRelative: one(file(`C:${member}`)),
    dotDot: one(file(`../${member}`)),
    dotSlash: one(file(`./${member}`)),
    backslash: one(file(`bin\\${member}`)),
    trailingSlash: one(file(`${member}/`)),
    nulInName: one(file(concatBytes(bytes(member), Uint8Array.of(0), bytes('.txt')))),
    duplicate: tarArchive([file(member), file(member, bytes('#!/bin/sh\necho second\n'))]),
    extraEntry: tarArchive([file(member), tarEntry({ name: 'README' }, 'hello\n')]),
    otherArchOnly: one(file(`${member}-other-arch`)),
    empty: one(file(member, new Uint8Array(0))),
    oversizeDeclared: tarArchive([truncatedEntry({ name: member, mode: 0o755, size: 257 * 1024 * 1024 }, data)], {
      endBlocks: 0,
    }),
    truncated: tarArchive([truncatedEntry({ name: member, mode: 0o755, size: data.length + 1000 }, data)], {
      endBlocks: 0,
    }),
    badChecksum: one(tarEntry({ name: member, mode: 0o755, checksum: 'corrupt' }, data)),
    garbageBlock: tarArchive([file(member), pseudoRandomBlock(42)]),
    trailingGarbage: tarArchive([file(member)], { trailing: pseudoRandomBlock(7) }),
    oneEndBlock: tarArchive([file(member)], { endBlocks: 1 }),
    noEndBlocks: tarArchive([file(member)], { endBlocks: 0 }),
    paxPathOverride: tarArchive([paxHeader({ path: member }), file('decoy')]),
    paxSizeOverride: tarArchive([paxHeader({ size: '0' }), file(member)]),
    paxSizeBeforeLongName: tarArchive([paxHeader({ size: String(BLOCK) }), gnuLongName(member), file('decoy')]),
    gnuLongNameDecoy: tarArchive([gnuLongName(member), file('decoy')]),
    paxGlobalPath: tarArchive([paxHeader({ path: member }, { global: true }), file('decoy')]),
    paxMalformedLength: tarArchive([rawPaxHeader(`99999999 path=${member}\n`), file(member)]),
  };
}

/** A PAX header whose single `comment` record makes the body `totalBytes` long (#45 memory). */
export function hugePaxHeader(totalBytes: number): Uint8Array {
  const overhead = ` comment=\n`.length;
  const digits = String(totalBytes).length;
  return paxHeader({ comment: 'x'.repeat(totalBytes - overhead - digits) });
}

/** A PAX header with `count` tiny records (#45 record-count bound). */
export function manyRecordPaxHeader(count: number): Uint8Array {
  return rawPaxHeader('8 a=bcd\n'.repeat(count)); // each record is exactly 8 bytes
}
