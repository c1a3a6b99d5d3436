import { type Bytes, bytes, concatBytes } from './bytes.js';
import { padToBlock, type SparseRegion, type TarHeader, tarEntry } from './tar.js';

/**
 * PAX extended headers and GNU extensions: the places where tar readers disagree about where
 * entries start or what they are called (node-tar GHSA-vmf3-w455-68vh, GNUSparseFile.0 reports).
 * Compose them with tarEntry/tarArchive, e.g. `[paxHeader([['size', '0']]), gnuLongName(n), …]`.
 */

/** `"<len> key=value\n"` where len counts the whole record, its own digits included. */
export function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const restBytes = bytes(rest).length;
  let len = restBytes + 1;
  while (String(len).length + restBytes !== len) len = String(len).length + restBytes;
  return `${len}${rest}`;
}

export type PaxRecords = Readonly<Record<string, string>> | readonly (readonly [string, string])[];

/** A `x` (or `g` when global) header whose body is the records; pairs allow duplicate keys. */
export function paxHeader(records: PaxRecords, options: { global?: boolean; name?: string } = {}): Uint8Array {
  const pairs = Array.isArray(records) ? records : Object.entries(records);
  const body = pairs.map(([k, v]) => paxRecord(k, v)).join('');
  return tarEntry(
    { name: options.name ?? 'PaxHeaders/entry', type: options.global ? 'pax-global' : 'pax-header' },
    body,
  );
}

/** A PAX header with a hand-written body, for malformed length prefixes or missing newlines. */
export function rawPaxHeader(body: Bytes): Uint8Array {
  return tarEntry({ name: 'PaxHeaders/entry', type: 'pax-header' }, body);
}

/** GNU `L`: the next header's name is this (NUL-terminated) string, any length. */
export function gnuLongName(name: Bytes): Uint8Array {
  return tarEntry({ name: '././@LongLink', type: 'gnu-longname' }, concatBytes(bytes(name), new Uint8Array(1)));
}

/** GNU `K`: the next header's linkname is this string. */
export function gnuLongLink(linkname: Bytes): Uint8Array {
  return tarEntry({ name: '././@LongLink', type: 'gnu-longlink' }, concatBytes(bytes(linkname), new Uint8Array(1)));
}

/**
 * The map GNU tar itself writes: the data as one region at offset 0, then a zero-length region
 * at the real size, which is what makes readers materialise the trailing hole.
 */
function sparseMap(dataLength: number, realSize: number): SparseRegion[] {
  if (realSize < dataLength) throw new RangeError('realSize must be >= the stored data');
  return [
    { offset: 0, numBytes: dataLength },
    { offset: realSize, numBytes: 0 },
  ];
}

/**
 * Old-GNU sparse (`S`): `data` is stored at offset 0 and the file expands to `realSize`
 * (default: data plus a 4 KiB hole at the end).
 */
export function gnuSparseEntry(
  name: Bytes,
  data: Bytes,
  realSize?: number,
  header: Partial<TarHeader> = {},
): Uint8Array {
  const d = bytes(data);
  const real = realSize ?? d.length + 4096;
  return tarEntry(
    { name, mode: 0o755, ...header, type: 'sparse', sparse: { map: sparseMap(d.length, real), realSize: real } },
    d,
  );
}

/**
 * PAX sparse format 1.0 as GNU tar writes it: PAX `GNU.sparse.*` records, then a regular `0`
 * entry named `GNUSparseFile.0/<name>` whose data starts with a 512-padded decimal sparse map.
 * A reader that ignores the records installs the map bytes under the wrong name.
 */
export function paxSparseEntry(name: string, data: Bytes, realSize?: number): Uint8Array {
  const d = bytes(data);
  const real = realSize ?? d.length + 4096;
  const regions = sparseMap(d.length, real);
  const map = padToBlock(bytes(`${regions.length}\n${regions.map((r) => `${r.offset}\n${r.numBytes}\n`).join('')}`));
  return concatBytes(
    paxHeader([
      ['GNU.sparse.major', '1'],
      ['GNU.sparse.minor', '0'],
      ['GNU.sparse.name', name],
      ['GNU.sparse.realsize', String(real)],
    ]),
    tarEntry({ name: `GNUSparseFile.0/${name}`, mode: 0o755, size: map.length + d.length }, concatBytes(map, d)),
  );
}
