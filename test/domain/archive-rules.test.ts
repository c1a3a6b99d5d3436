import { describe, expect, it } from 'vitest';
import {
  checkMemberName,
  judgeArchiveEnd,
  judgeEntry,
  limitsFor,
  memberNameFor,
  unsafeNameReason,
  type TarEntryHeader,
  type TarEntryType,
} from '../../src/domain/node/artifact/archive-rules.js';

const MEMBER = 'aks-flex-node-linux-amd64';
const LIMITS = limitsFor(1000, 100);
const entry = (overrides: Partial<TarEntryHeader> = {}): TarEntryHeader => ({
  name: MEMBER,
  type: 'file',
  size: 10,
  pax: null,
  ...overrides,
});
const codeOf = (header: TarEntryHeader, seen = 0): string | null => {
  const verdict = judgeEntry(header, MEMBER, seen, LIMITS);
  return verdict.ok ? null : verdict.failure.code;
};

describe('judgeEntry', () => {
  it('accepts the one regular file named exactly the member, 1 byte to the cap', () => {
    expect(codeOf(entry({ size: 1 }))).toBeNull();
    expect(codeOf(entry({ size: 100 }))).toBeNull();
  });

  it.each([
    ['a second entry, even the same member again', entry(), 1, 'E_ARCHIVE_MEMBER'],
    ['another name', entry({ name: 'other' }), 0, 'E_ARCHIVE_MEMBER'],
    ['the member under a directory', entry({ name: `bin/${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['the member with ./', entry({ name: `./${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['the member with a trailing slash', entry({ name: `${MEMBER}/` }), 0, 'E_ARCHIVE_MEMBER'],
    ['the other architecture', entry({ name: 'aks-flex-node-linux-arm64' }), 0, 'E_ARCHIVE_MEMBER'],
    ['an absolute name', entry({ name: `/${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['a parent segment', entry({ name: `../${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['a backslash', entry({ name: `bin\\${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['a NUL byte', entry({ name: `${MEMBER}\0x` }), 0, 'E_ARCHIVE_MEMBER'],
    ['a newline', entry({ name: `${MEMBER}\n` }), 0, 'E_ARCHIVE_MEMBER'],
    ['a drive letter', entry({ name: `C:${MEMBER}` }), 0, 'E_ARCHIVE_MEMBER'],
    ['an empty size', entry({ size: 0 }), 0, 'E_ARCHIVE_MEMBER_SIZE'],
    ['a size over the cap', entry({ size: 101 }), 0, 'E_ARCHIVE_MEMBER_SIZE'],
    ['a negative size', entry({ size: -1 }), 0, 'E_ARCHIVE_MEMBER_SIZE'],
    ['a non-integer size', entry({ size: Number.NaN }), 0, 'E_ARCHIVE_MEMBER_SIZE'],
    ['GNU sparse PAX records', entry({ pax: { 'GNU.sparse.major': '1' } }), 0, 'E_ARCHIVE_MEMBER_TYPE'],
  ] as const)('refuses %s', (_name, header, seen, code) => {
    expect(codeOf(header, seen)).toBe(code);
  });

  it.each([
    'link',
    'symlink',
    'character-device',
    'block-device',
    'directory',
    'fifo',
    'contiguous-file',
    'pax-header',
    'pax-global-header',
    'gnu-long-path',
    'gnu-long-link-path',
    'unknown',
  ] as const)('refuses a %s member with E_ARCHIVE_MEMBER_TYPE', (type: TarEntryType) => {
    expect(codeOf(entry({ type }))).toBe('E_ARCHIVE_MEMBER_TYPE');
  });

  it('refuses a GNU sparse member stored under GNUSparseFile.0 as a sparse file', () => {
    const verdict = judgeEntry(entry({ name: 'GNUSparseFile.0/x' }), 'GNUSparseFile.0/x', 0, LIMITS);
    expect(verdict.ok ? null : verdict.failure.code).toBe('E_ARCHIVE_MEMBER_TYPE');
  });
});

describe('judgeArchiveEnd', () => {
  it.each([
    [0, 'E_ARCHIVE_MEMBER'],
    [1, null],
  ])('%d entries → %s', (seen, code) => {
    const verdict = judgeArchiveEnd(MEMBER, seen);
    expect(verdict.ok ? null : verdict.failure.code).toBe(code);
  });
});

describe('member names', () => {
  it.each([
    ['aks-flex-node-linux-{arch}', 'amd64', 'aks-flex-node-linux-amd64'],
    ['aks-flex-node-linux-{arch}', 'arm64', 'aks-flex-node-linux-arm64'],
    ['agent', 'amd64', 'agent'],
    ['{arch}/{arch}', 'amd64', null],
  ] as const)('template %s for %s → %s', (template, arch, expected) => {
    const name = memberNameFor(template, arch);
    expect(name.ok ? name.value : null).toBe(expected);
  });

  it.each(['', '.', '..', 'a/b', '/abs', 'a\\b', 'a\0b', 'x'.repeat(256)])(
    'refuses the member name %j with E_USAGE',
    (name) => {
      const checked = checkMemberName(name);
      expect(checked.ok ? null : checked.failure.code).toBe('E_USAGE');
    },
  );

  it('finds no reason to refuse a plain name', () => {
    expect(unsafeNameReason('aks-flex-node-linux-amd64')).toBeNull();
  });

  it('derives the decompressed cap from the binary cap', () => {
    expect(limitsFor(5, 7)).toEqual({ maxArchiveBytes: 5, maxBinaryBytes: 7, maxInflatedBytes: 14 + 64 * 1024 });
  });
});
