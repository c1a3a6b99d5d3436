import { describe, expect, it } from 'vitest';
import { type CurrentFixture, decode, expectFailure, sha256Hex, toolsFor } from './file-system.support.js';

/** The FileSystem contract (file-system.contract.ts): reading links, files and directories. */

/** resolve, lstat, readLink, readFile, hashFile and listDirectory. */
export function readingContract(current: CurrentFixture): void {
  describe('reading', () => {
    linkReadingCases(current);
    fileReadingCases(current);
  });
}

/** What resolve, lstat and readLink report. */
function linkReadingCases(current: CurrentFixture): void {
  const { at, write } = toolsFor(current);
  it('resolve reports missing for a dangling link and loop for a link cycle', async () => {
    const { fs } = current();
    await fs.replaceSymlink(at('dangling'), 'nowhere');
    await fs.replaceSymlink(at('a'), 'b');
    await fs.replaceSymlink(at('b'), 'a');
    expect(await fs.resolve(at('dangling'))).toEqual({ kind: 'missing' });
    expect(await fs.resolve(at('absent'))).toEqual({ kind: 'missing' });
    expect(await fs.resolve(at('a'))).toEqual({ kind: 'loop' });
  });

  it('lstat describes each kind without following links, and null when absent', async () => {
    const { fs } = current();
    await write('file', 'abc', 0o640);
    await fs.ensureDirectory(at('dir'), 0o710);
    await fs.replaceSymlink(at('link'), 'file');
    expect(await fs.lstat(at('file'))).toMatchObject({ kind: 'file', mode: 0o640, size: 3 });
    expect(await fs.lstat(at('dir'))).toMatchObject({ kind: 'directory', mode: 0o710 });
    expect(await fs.lstat(at('link'))).toMatchObject({ kind: 'symlink', size: 4 });
    expect((await fs.lstat(at('file')))?.uid).toEqual(expect.any(Number));
    expect(await fs.lstat(at('absent'))).toBeNull();
  });

  it('readLink returns the text, null when absent, EINVAL for a file or directory', async () => {
    const { fs, root } = current();
    await write('file', 'x');
    await fs.replaceSymlink(at('link'), '/absolute/target');
    expect(await fs.readLink(at('link'))).toBe('/absolute/target');
    expect(await fs.readLink(at('absent'))).toBeNull();
    await expectFailure(fs.readLink(at('file')), 'EINVAL');
    await expectFailure(fs.readLink(root), 'EINVAL');
  });
}

/** What readFile, hashFile and listDirectory return or refuse. */
function fileReadingCases(current: CurrentFixture): void {
  const { at, write } = toolsFor(current);
  it('readFile follows links, returns null when absent, and refuses past maxBytes', async () => {
    const { fs, root } = current();
    await write('file', '12345');
    await fs.replaceSymlink(at('link'), 'file');
    expect(decode(await fs.readFile(at('link'), 5))).toBe('12345');
    expect(await fs.readFile(at('absent'), 5)).toBeNull();
    await expectFailure(fs.readFile(at('file'), 4), 'ETOOBIG');
    await expectFailure(fs.readFile(root, 100), 'EISDIR');
  });

  it('readFile without following links reads a file, refuses a link at the path (ELOOP), and null when absent', async () => {
    const { fs } = current();
    await fs.ensureDirectory(at('dir'), 0o755);
    await write('dir/file', 'own');
    await fs.replaceSymlink(at('dir/link'), 'file');
    await fs.replaceSymlink(at('via'), 'dir');
    expect(decode(await fs.readFile(at('dir/file'), 3, { followLinks: false }))).toBe('own');
    // Only the last component is refused: a linked parent directory is still followed.
    expect(decode(await fs.readFile(at('via/file'), 3, { followLinks: false }))).toBe('own');
    await expectFailure(fs.readFile(at('dir/link'), 3, { followLinks: false }), 'ELOOP');
    expect(await fs.readFile(at('dir/absent'), 3, { followLinks: false })).toBeNull();
    expect(decode(await fs.readFile(at('dir/link'), 3))).toBe('own');
  });

  it('readFile refuses a FIFO with ENOTREG at once, directly and through a link, never waiting for a writer', async () => {
    const { fs, makeFifo } = current();
    if (makeFifo === undefined) return; // the model holds no special files
    await makeFifo(at('fifo'));
    await fs.replaceSymlink(at('to-fifo'), 'fifo');
    await expectFailure(fs.readFile(at('fifo'), 100), 'ENOTREG');
    await expectFailure(fs.readFile(at('to-fifo'), 100), 'ENOTREG');
    await expectFailure(fs.readFile(at('to-fifo'), 100, { followLinks: false }), 'ELOOP');
  });

  it('hashFile digests the content, refuses past maxBytes, and fails with ENOENT when absent', async () => {
    const { fs } = current();
    await write('file', 'digest me');
    expect(await fs.hashFile(at('file'), 9)).toEqual({ sha256: sha256Hex('digest me'), bytes: 9 });
    await write('empty', '');
    expect(await fs.hashFile(at('empty'), 0)).toEqual({ sha256: sha256Hex(''), bytes: 0 });
    await expectFailure(fs.hashFile(at('file'), 8), 'ETOOBIG');
    await expectFailure(fs.hashFile(at('absent'), 8), 'ENOENT');
  });

  it('listDirectory lists names sorted, null when absent, ENOTDIR for a file', async () => {
    const { fs, root } = current();
    await write('b', '');
    await write('a', '');
    await fs.ensureDirectory(at('c'), 0o755);
    await fs.replaceSymlink(at('B'), 'b');
    expect(await fs.listDirectory(root)).toEqual(['B', 'a', 'b', 'c']);
    expect(await fs.listDirectory(at('absent'))).toBeNull();
    await expectFailure(fs.listDirectory(at('a')), 'ENOTDIR');
  });
}

/** FileSystem.readRange. */
export function readRangeContract(current: CurrentFixture): void {
  describe('readRange', () => {
    const { at, write } = toolsFor(current);
    it('returns the bytes from an offset, fewer at the end, none past it, null when absent, following links', async () => {
      const { fs } = current();
      const text = async (path: string, offset: number, bytes: number) =>
        new TextDecoder().decode((await fs.readRange(at(path), offset, bytes)) ?? new Uint8Array([0x3f]));
      await write('file', 'abcdef');
      await fs.replaceSymlink(at('link'), 'file');
      expect(await text('file', 0, 4)).toBe('abcd');
      expect(await text('link', 0, 64)).toBe('abcdef');
      expect(await text('file', 4, 64)).toBe('ef');
      expect(await text('file', 9, 4)).toBe('');
      expect(await fs.readRange(at('absent'), 0, 4)).toBeNull();
    });
  });
}
