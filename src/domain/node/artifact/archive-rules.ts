import { fail, ok, type Result } from '../../common/failure.js';

/**
 * What a release archive may contain (docs/operations.md#fetch): exactly one entry, named exactly
 * the expected member, a regular file of 1 byte to `maxBinaryBytes`. Every decision is made from
 * the entry's header before a single byte of it is used, and no archive path ever names a file on
 * disk.
 */
export interface ArchiveLimits {
  readonly maxArchiveBytes: number;
  readonly maxBinaryBytes: number;
  /** Cap on the decompressed stream: header blocks, the member and padding together. */
  readonly maxInflatedBytes: number;
}

/** Room for the tar's own blocks besides the member: headers, PAX records, end blocks, padding. */
export const TAR_OVERHEAD_BYTES = 64 * 1024;

export function limitsFor(maxArchiveBytes: number, maxBinaryBytes: number): ArchiveLimits {
  // A tar of one member needs its size plus a few blocks; twice the binary cap (plus the tar's
  // own overhead) leaves room for that while still stopping a decompression bomb early.
  return { maxArchiveBytes, maxBinaryBytes, maxInflatedBytes: 2 * maxBinaryBytes + TAR_OVERHEAD_BYTES };
}

/** The entry types tar readers report; anything not `file` is refused for the member. */
export type TarEntryType =
  | 'file'
  | 'link'
  | 'symlink'
  | 'character-device'
  | 'block-device'
  | 'directory'
  | 'fifo'
  | 'contiguous-file'
  | 'pax-header'
  | 'pax-global-header'
  | 'gnu-long-link-path'
  | 'gnu-long-path'
  | 'unknown';

export interface TarEntryHeader {
  readonly name: string;
  readonly type: TarEntryType;
  readonly size: number;
  /** PAX records attached to this entry, if any. */
  readonly pax: Readonly<Record<string, string>> | null;
}

/**
 * Judges one entry. `entriesSeen` counts the entries before this one: a second entry of any
 * kind — a duplicate, a directory, a sidecar file — makes the archive invalid.
 */
export function judgeEntry(
  header: TarEntryHeader,
  expectedMember: string,
  entriesSeen: number,
  limits: ArchiveLimits,
): Result<TarEntryHeader> {
  if (entriesSeen > 0)
    return fail('E_ARCHIVE_MEMBER', `the archive holds more than one entry (expected only ${expectedMember})`);
  const unsafe = unsafeNameReason(header.name);
  if (unsafe !== null) return fail('E_ARCHIVE_MEMBER', `the archive entry name is unsafe: ${unsafe}`);
  if (header.name !== expectedMember)
    return fail('E_ARCHIVE_MEMBER', `the archive entry is not named ${expectedMember}`);
  if (header.type !== 'file')
    return fail(
      'E_ARCHIVE_MEMBER_TYPE',
      `the archive member ${expectedMember} is a ${header.type}, not a regular file`,
    );
  if (isSparse(header)) return fail('E_ARCHIVE_MEMBER_TYPE', `the archive member ${expectedMember} is a sparse file`);
  if (!Number.isSafeInteger(header.size) || header.size < 1 || header.size > limits.maxBinaryBytes) {
    return fail(
      'E_ARCHIVE_MEMBER_SIZE',
      `the archive member ${expectedMember} must be 1 to ${limits.maxBinaryBytes} bytes`,
    );
  }
  return ok(header);
}

/** The archive ended: it must have held the member. */
export function judgeArchiveEnd(expectedMember: string, entriesSeen: number): Result<void> {
  return entriesSeen === 1 ? ok(undefined) : fail('E_ARCHIVE_MEMBER', `the archive does not contain ${expectedMember}`);
}

function isSparse(header: TarEntryHeader): boolean {
  if (header.name.startsWith('GNUSparseFile.') || header.name.includes('/GNUSparseFile.')) return true;
  return header.pax !== null && Object.keys(header.pax).some((key) => key.startsWith('GNU.sparse.'));
}

/** C0 controls and DEL: the Unicode category Cc without its C1 range (U+0080–U+009F). */
const C0_CONTROL_OR_DEL = /[^\P{Cc}\u0080-\u009f]/u;

/** Why a name is unsafe, or null: used for every entry, even ones that would not match. */
export function unsafeNameReason(name: string): string | null {
  if (name === '') return 'empty name';
  if (name.includes('\0')) return 'NUL byte';
  if (name.includes('\\')) return 'backslash';
  if (name.startsWith('/')) return 'absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'drive-letter path';
  if (name.split('/').some((segment) => segment === '..')) return 'parent-directory segment';
  if (C0_CONTROL_OR_DEL.test(name)) return 'control character';
  return null;
}

export type HostArchitecture = 'amd64' | 'arm64';

/**
 * The member name for an architecture from a template such as `aks-flex-node-linux-{arch}`.
 * The result must be a plain file name: it is compared byte for byte with archive entries.
 */
export function memberNameFor(template: string, arch: HostArchitecture): Result<string> {
  return checkMemberName(template.split('{arch}').join(arch));
}

export function checkMemberName(name: string): Result<string> {
  if (name.length > 255 || name === '.' || name.includes('/') || unsafeNameReason(name) !== null) {
    return fail('E_USAGE', 'the archive member name must be a plain file name without a path');
  }
  return ok(name);
}
