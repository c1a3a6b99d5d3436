import { type Bytes, bytes, concatBytes } from './bytes.js';

/**
 * Hand-written tar headers. Libraries (tar-stream, node-tar, GNU tar) refuse or normalise the
 * tricks a hostile archive needs — bad checksums, lying sizes, sparse or device entries for
 * the target name, PAX/GNU combinations — so every byte of the 512-byte header is ours.
 * Layout: POSIX ustar (pubs.opengroup.org "pax" §ustar Interchange Format) and GNU tar's
 * `struct oldgnu_header` for sparse maps.
 */

export const BLOCK = 512;

export type TarEntryType =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'link'
  | 'char'
  | 'block'
  | 'fifo'
  | 'sparse'
  | 'contiguous'
  | 'pax-header'
  | 'pax-global'
  | 'gnu-longname'
  | 'gnu-longlink';

const TYPEFLAG: Readonly<Record<TarEntryType, string>> = {
  file: '0',
  link: '1',
  symlink: '2',
  char: '3',
  block: '4',
  directory: '5',
  fifo: '6',
  contiguous: '7',
  'pax-header': 'x',
  'pax-global': 'g',
  'gnu-longname': 'L',
  'gnu-longlink': 'K',
  sparse: 'S',
};

export interface SparseRegion {
  readonly offset: number;
  readonly numBytes: number;
}

export interface TarHeader {
  /** At most 100 bytes: no silent splitting — use `prefix`, `gnuLongName` or a PAX `path`. */
  readonly name: Bytes;
  readonly type?: TarEntryType;
  /** Raw typeflag byte, overriding `type` (e.g. '\0' for an old regular file, or 'Z'). */
  readonly typeflag?: string;
  /** Declared size; defaults to the body length. May differ from the body (a lie). */
  readonly size?: number;
  readonly mode?: number;
  readonly uid?: number;
  readonly gid?: number;
  readonly mtime?: number;
  readonly uname?: string;
  readonly gname?: string;
  readonly linkname?: Bytes;
  readonly devmajor?: number;
  readonly devminor?: number;
  /** ustar `prefix` (155 bytes); not available in the gnu format, which uses that area. */
  readonly prefix?: Bytes;
  /** Magic: ustar "ustar\0""00", gnu "ustar  \0", v7 none. Sparse/L/K default to gnu. */
  readonly format?: 'ustar' | 'gnu' | 'v7';
  /** GNU `S` entries: up to 4 regions in the header, and the full (expanded) file size. */
  readonly sparse?: { readonly map: readonly SparseRegion[]; readonly realSize: number };
  /** A specific stored checksum, or `'corrupt'` for the correct one plus one. */
  readonly checksum?: number | 'corrupt';
  /** Raw bytes written last before the checksum, for malformed fields (e.g. non-octal size). */
  readonly patch?: readonly { readonly offset: number; readonly bytes: Bytes }[];
}

function put(block: Uint8Array, offset: number, width: number, value: Bytes, field: string): void {
  const b = bytes(value);
  if (b.length > width) throw new RangeError(`tar ${field} is ${b.length} bytes, field holds ${width}`);
  block.set(b, offset);
}

/** Octal digits + NUL; base-256 (GNU/star extension) when the value does not fit. */
function putNumber(block: Uint8Array, offset: number, width: number, value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`tar ${field} must be a non-negative integer`);
  const octal = value.toString(8);
  if (octal.length <= width - 1) {
    put(block, offset, width, `${octal.padStart(width - 1, '0')}\0`, field);
    return;
  }
  let v = value;
  for (let i = offset + width - 1; i > offset; i--) {
    block[i] = v % 256;
    v = Math.floor(v / 256);
  }
  block[offset] = 0x80;
}

export function headerChecksum(block: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  return sum;
}

/** One raw 512-byte header block. */
export function tarHeader(h: TarHeader, bodyLength = 0): Uint8Array {
  const type = h.type ?? 'file';
  const format =
    h.format ?? (type === 'sparse' || type === 'gnu-longname' || type === 'gnu-longlink' ? 'gnu' : 'ustar');
  const block = new Uint8Array(BLOCK);
  put(block, 0, 100, h.name, 'name');
  putNumber(block, 100, 8, h.mode ?? (type === 'directory' ? 0o755 : 0o644), 'mode');
  putNumber(block, 108, 8, h.uid ?? 0, 'uid');
  putNumber(block, 116, 8, h.gid ?? 0, 'gid');
  putNumber(block, 124, 12, h.size ?? bodyLength, 'size');
  putNumber(block, 136, 12, h.mtime ?? 1_700_000_000, 'mtime');
  put(block, 156, 1, h.typeflag ?? TYPEFLAG[type], 'typeflag');
  put(block, 157, 100, h.linkname ?? '', 'linkname');
  if (format !== 'v7') {
    put(block, 257, 8, format === 'gnu' ? 'ustar  \0' : 'ustar\u000000', 'magic');
    put(block, 265, 32, h.uname ?? 'root', 'uname');
    put(block, 297, 32, h.gname ?? 'root', 'gname');
    putNumber(block, 329, 8, h.devmajor ?? 0, 'devmajor');
    putNumber(block, 337, 8, h.devminor ?? 0, 'devminor');
  }
  if (h.prefix !== undefined) {
    if (format !== 'ustar') throw new RangeError('prefix exists only in the ustar format');
    put(block, 345, 155, h.prefix, 'prefix');
  }
  if (h.sparse !== undefined) {
    if (format !== 'gnu') throw new RangeError('a sparse map needs the gnu format');
    if (h.sparse.map.length > 4) throw new RangeError('only the 4 in-header sparse regions are supported');
    h.sparse.map.forEach((r, i) => {
      putNumber(block, 386 + i * 24, 12, r.offset, 'sparse offset');
      putNumber(block, 398 + i * 24, 12, r.numBytes, 'sparse numbytes');
    });
    block[482] = 0; // isextended: no continuation blocks
    putNumber(block, 483, 12, h.sparse.realSize, 'realsize');
  }
  for (const p of h.patch ?? []) block.set(bytes(p.bytes), p.offset);
  const correct = headerChecksum(block);
  const stored = h.checksum === 'corrupt' ? correct + 1 : (h.checksum ?? correct);
  put(block, 148, 8, `${stored.toString(8).padStart(6, '0')}\0 `, 'checksum');
  return block;
}

export function padToBlock(data: Uint8Array): Uint8Array {
  const rest = data.length % BLOCK;
  return rest === 0 ? data : concatBytes(data, new Uint8Array(BLOCK - rest));
}

/** Header + body padded to 512. The declared size defaults to the body length. */
export function tarEntry(header: TarHeader, body: Bytes = new Uint8Array(0)): Uint8Array {
  const data = bytes(body);
  return concatBytes(tarHeader(header, data.length), padToBlock(data));
}

/**
 * A header whose declared size exceeds the data that follows, unpadded: the archive ends inside
 * the entry. Put it last with `endBlocks: 0`.
 */
export function truncatedEntry(header: TarHeader & { readonly size: number }, data: Bytes): Uint8Array {
  const b = bytes(data);
  if (b.length >= header.size) throw new RangeError('truncatedEntry needs data shorter than the declared size');
  return concatBytes(tarHeader(header), b);
}

export interface ArchiveOptions {
  /** Zero blocks at the end; POSIX wants 2. Default 2. */
  readonly endBlocks?: 0 | 1 | 2;
  /** Bytes after the end marker (garbage, a second archive, …). */
  readonly trailing?: Uint8Array;
}

export function tarArchive(entries: readonly Uint8Array[], options: ArchiveOptions = {}): Uint8Array {
  return concatBytes(
    ...entries,
    new Uint8Array(BLOCK * (options.endBlocks ?? 2)),
    options.trailing ?? new Uint8Array(0),
  );
}
