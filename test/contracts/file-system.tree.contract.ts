import { describe, expect, it } from 'vitest';
import { type CurrentFixture, decode, describeTree, expectFailure, toolsFor } from './file-system.support.js';

/** The FileSystem contract (file-system.contract.ts): links, removal and directories. */

/** FileSystem.replaceSymlink. */
export function replaceSymlinkContract(current: CurrentFixture): void {
  describe('replaceSymlink', () => {
    const { at, write, tempsIn } = toolsFor(current);
    it('creates a link, then swaps an existing one to a new target', async () => {
      const { fs, root } = current();
      await fs.replaceSymlink(at('current'), 'blue');
      expect(await fs.readLink(at('current'))).toBe('blue');
      await fs.replaceSymlink(at('current'), 'green');
      expect(await fs.readLink(at('current'))).toBe('green');
      expect(await fs.lstat(at('current'))).toMatchObject({ kind: 'symlink' });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('replaces a regular file with a link', async () => {
      const { fs } = current();
      await write('legacy', 'binary');
      await fs.replaceSymlink(at('legacy'), 'slots/blue');
      expect(await fs.lstat(at('legacy'))).toMatchObject({ kind: 'symlink' });
      expect(await fs.readLink(at('legacy'))).toBe('slots/blue');
    });

    it('swaps a link to a directory without moving the directories', async () => {
      const { fs } = current();
      await fs.ensureDirectory(at('v1'), 0o755);
      await fs.ensureDirectory(at('v2'), 0o755);
      await write('v1/agent', 'one');
      await write('v2/agent', 'two');
      await fs.replaceSymlink(at('current'), 'v1');
      await fs.replaceSymlink(at('current'), 'v2');
      expect(decode(await fs.readFile(at('current/agent'), 100))).toBe('two');
      expect(decode(await fs.readFile(at('v1/agent'), 100))).toBe('one');
      expect(await fs.lstat(at('v2'))).toMatchObject({ kind: 'directory' });
    });

    it('refuses a directory with EISDIR and changes nothing', async () => {
      const { fs, root } = current();
      await fs.ensureDirectory(at('dir'), 0o750);
      await write('dir/inside', 'x');
      const before = await describeTree(fs, root);
      await expectFailure(fs.replaceSymlink(at('dir'), 'elsewhere'), 'EISDIR');
      expect(await describeTree(fs, root)).toEqual(before);
    });

    it('keeps relative link text verbatim and resolve follows it', async () => {
      const { fs, root } = current();
      await fs.ensureDirectory(at('slots'), 0o750);
      await write('slots/blue', 'agent', 0o755);
      await fs.replaceSymlink(at('current'), 'slots/blue');
      await fs.replaceSymlink(at('slots/entry'), '../current');
      expect(await fs.readLink(at('slots/entry'))).toBe('../current');
      const realRoot = await fs.resolve(root);
      if (realRoot.kind !== 'resolved') throw new Error('the fixture root must resolve');
      expect(await fs.resolve(at('slots/entry'))).toEqual({
        kind: 'resolved',
        path: `${realRoot.path}/slots/blue`,
        stat: expect.objectContaining({ kind: 'file', mode: 0o755, size: 5 }),
      });
    });

    it('is idempotent', async () => {
      const { fs, root } = current();
      await fs.replaceSymlink(at('current'), 'blue');
      const once = await describeTree(fs, root);
      await fs.replaceSymlink(at('current'), 'blue');
      expect(await describeTree(fs, root)).toEqual(once);
    });
  });
}

/** FileSystem.remove. */
export function removeContract(current: CurrentFixture): void {
  describe('remove', () => {
    const { at, write } = toolsFor(current);
    it('removes a file, and a link without touching its target', async () => {
      const { fs, root } = current();
      await write('file', 'x');
      await fs.replaceSymlink(at('link'), 'file');
      await fs.remove(at('link'));
      expect(await fs.lstat(at('link'))).toBeNull();
      expect(await fs.lstat(at('file'))).toMatchObject({ kind: 'file' });
      await fs.remove(at('file'));
      expect(await fs.listDirectory(root)).toEqual([]);
    });

    it('treats an absent entry (or absent parent) as success and is idempotent', async () => {
      const { fs, root } = current();
      await write('file', 'x');
      await fs.remove(at('file'));
      await fs.remove(at('file'));
      await fs.remove(at('absent/deeper'));
      expect(await fs.listDirectory(root)).toEqual([]);
    });

    it('refuses a directory with EISDIR', async () => {
      const { fs } = current();
      await fs.ensureDirectory(at('dir'), 0o755);
      await expectFailure(fs.remove(at('dir')), 'EISDIR');
      expect(await fs.lstat(at('dir'))).toMatchObject({ kind: 'directory' });
    });
  });
}

/** FileSystem.ensureDirectory. */
export function ensureDirectoryContract(current: CurrentFixture): void {
  describe('ensureDirectory', () => {
    const { at, write } = toolsFor(current);
    it('creates the directory with the exact mode and missing parents with 0755, whatever the umask', async () => {
      const { fs } = current();
      await fs.ensureDirectory(at('a/b/c'), 0o750);
      for (const path of ['a', 'a/b'])
        expect(await fs.lstat(at(path))).toMatchObject({ kind: 'directory', mode: 0o755 });
      expect(await fs.lstat(at('a/b/c'))).toMatchObject({ kind: 'directory', mode: 0o750 });
      await fs.ensureDirectory(at('group-writable'), 0o770);
      expect(await fs.lstat(at('group-writable'))).toMatchObject({ mode: 0o770 });
    });

    it('keeps the mode of existing directories and is idempotent', async () => {
      const { fs, root } = current();
      await fs.ensureDirectory(at('a'), 0o700);
      await fs.ensureDirectory(at('a/b'), 0o750);
      const once = await describeTree(fs, root);
      await fs.ensureDirectory(at('a/b'), 0o750);
      expect(await describeTree(fs, root)).toEqual(once);
      expect(await fs.lstat(at('a'))).toMatchObject({ mode: 0o700 });
    });

    it('follows a symlink to a directory', async () => {
      const { fs } = current();
      await fs.ensureDirectory(at('real'), 0o755);
      await fs.replaceSymlink(at('alias'), 'real');
      await fs.ensureDirectory(at('alias/sub'), 0o750);
      expect(await fs.lstat(at('real/sub'))).toMatchObject({ kind: 'directory', mode: 0o750 });
    });

    it('fails with ENOTDIR on an existing file or dangling link, at the end or on the way', async () => {
      const { fs, root } = current();
      await write('file', 'x');
      await fs.replaceSymlink(at('dangling'), 'nowhere');
      await expectFailure(fs.ensureDirectory(at('file'), 0o755), 'ENOTDIR');
      await expectFailure(fs.ensureDirectory(at('file/below'), 0o755), 'ENOTDIR');
      await expectFailure(fs.ensureDirectory(at('dangling'), 0o755), 'ENOTDIR');
      expect(await fs.listDirectory(root)).toEqual(['dangling', 'file']);
    });
  });
}
