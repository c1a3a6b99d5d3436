import { describe, expect, it } from 'vitest';
import {
  type CurrentFixture,
  decode,
  describeTree,
  expectFailure,
  sha256Hex,
  toolsFor,
} from './file-system.support.js';

/** The FileSystem contract (file-system.contract.ts): writing whole files, by bytes, by copy or staged in chunks. */

/** FileSystem.writeFileAtomic. */
export function writeFileAtomicContract(current: CurrentFixture): void {
  describe('writeFileAtomic', () => {
    const { at, write, tempsIn } = toolsFor(current);
    it('creates a file with the given content and mode', async () => {
      const { fs, root } = current();
      await write('a', 'hello', 0o640);
      expect(decode(await fs.readFile(at('a'), 100))).toBe('hello');
      expect(await fs.lstat(at('a'))).toMatchObject({ kind: 'file', mode: 0o640, size: 5 });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('replaces the content and the mode of an existing file', async () => {
      const { fs, root } = current();
      await write('a', 'old content', 0o644);
      await write('a', 'new', 0o755);
      expect(decode(await fs.readFile(at('a'), 100))).toBe('new');
      expect(await fs.lstat(at('a'))).toMatchObject({ kind: 'file', mode: 0o755, size: 3 });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('replaces a symlink itself, never the file it points to', async () => {
      const { fs } = current();
      await write('target', 'kept');
      await fs.replaceSymlink(at('link'), 'target');
      await write('link', 'replaced');
      expect(await fs.lstat(at('link'))).toMatchObject({ kind: 'file' });
      expect(decode(await fs.readFile(at('target'), 100))).toBe('kept');
    });

    it('fails with ENOENT when the parent is missing, and EISDIR onto a directory, leaving no temp', async () => {
      const { fs, root } = current();
      await expectFailure(write('missing/a', 'x'), 'ENOENT');
      await fs.ensureDirectory(at('dir'), 0o755);
      await expectFailure(write('dir', 'x'), 'EISDIR');
      expect(await fs.lstat(at('dir'))).toMatchObject({ kind: 'directory' });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('is idempotent', async () => {
      const { fs, root } = current();
      await write('a', 'same', 0o600);
      const once = await describeTree(fs, root);
      await write('a', 'same', 0o600);
      expect(await describeTree(fs, root)).toEqual(once);
    });
  });
}

/** FileSystem.copyFileAtomic. */
export function copyFileAtomicContract(current: CurrentFixture): void {
  describe('copyFileAtomic', () => {
    const { at, write, tempsIn } = toolsFor(current);
    it('copies the bytes with the given mode and returns their digest', async () => {
      const { fs, root } = current();
      await write('source', 'payload', 0o600);
      const digest = await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o755, maxBytes: 7 });
      expect(digest).toEqual({ sha256: sha256Hex('payload'), bytes: 7 });
      expect(decode(await fs.readFile(at('target'), 100))).toBe('payload');
      expect(await fs.lstat(at('target'))).toMatchObject({ kind: 'file', mode: 0o755 });
      expect(await fs.hashFile(at('target'), 100)).toEqual(digest);
      expect(await tempsIn(root)).toEqual([]);
    });

    it('follows a symlink at the source and replaces an existing target', async () => {
      const { fs } = current();
      await write('source', 'new bytes');
      await fs.replaceSymlink(at('via'), 'source');
      await write('target', 'old bytes');
      await fs.copyFileAtomic(at('via'), at('target'), { mode: 0o644, maxBytes: 100 });
      expect(decode(await fs.readFile(at('target'), 100))).toBe('new bytes');
    });

    it('refuses past maxBytes with ETOOBIG, leaving the target unchanged and no temp', async () => {
      const { fs, root } = current();
      await write('source', 'eight by');
      await write('target', 'unchanged', 0o644);
      await expectFailure(fs.copyFileAtomic(at('source'), at('target'), { mode: 0o755, maxBytes: 7 }), 'ETOOBIG');
      expect(decode(await fs.readFile(at('target'), 100))).toBe('unchanged');
      expect(await fs.lstat(at('target'))).toMatchObject({ mode: 0o644 });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('fails with ENOENT for a missing source, creating nothing', async () => {
      const { fs, root } = current();
      await expectFailure(fs.copyFileAtomic(at('absent'), at('target'), { mode: 0o644, maxBytes: 100 }), 'ENOENT');
      expect(await fs.listDirectory(root)).toEqual([]);
    });

    it('is idempotent', async () => {
      const { fs, root } = current();
      await write('source', 'payload');
      const first = await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o700, maxBytes: 100 });
      const once = await describeTree(fs, root);
      expect(await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o700, maxBytes: 100 })).toEqual(first);
      expect(await describeTree(fs, root)).toEqual(once);
    });
  });
}

/** FileSystem.stageFile: a temp written in chunks, sealed, then committed or discarded. */
export function stageFileContract(current: CurrentFixture): void {
  describe('stageFile', () => {
    const { at, write, tempsIn } = toolsFor(current);
    const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

    it('writes chunks to a temp, and only commit replaces the target with their content and mode', async () => {
      const { fs, root } = current();
      await write('target', 'old');
      const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 100 });
      await staged.write(bytes('new '));
      await staged.write(bytes('content'));
      expect(new TextDecoder().decode((await fs.readFile(at('target'), 100)) ?? new Uint8Array())).toBe('old');
      expect(await staged.seal()).toEqual({ bytes: 11 });
      await staged.commit();
      expect(new TextDecoder().decode((await fs.readFile(at('target'), 100)) ?? new Uint8Array())).toBe('new content');
      expect(await fs.lstat(at('target'))).toMatchObject({ kind: 'file', mode: 0o755 });
      expect(await tempsIn(root)).toEqual([]);
    });

    it('discard leaves the target as it was and no temp, before or after seal', async () => {
      const { fs, root } = current();
      await write('target', 'old');
      const before = await describeTree(fs, root);
      const open = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 100 });
      await open.write(bytes('partial'));
      await open.discard();
      const sealed = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 100 });
      await sealed.write(bytes('complete'));
      await sealed.seal();
      await sealed.discard();
      await sealed.discard();
      expect(await describeTree(fs, root)).toEqual(before);
    });

    it('refuses bytes past maxBytes with ETOOBIG and keeps nothing', async () => {
      const { fs, root } = current();
      const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 4 });
      await staged.write(bytes('1234'));
      await expectFailure(staged.write(bytes('5')), 'ETOOBIG');
      expect(await fs.lstat(at('target'))).toBeNull();
      expect(await tempsIn(root)).toEqual([]);
    });

    it('refuses commit before seal', async () => {
      const { fs, root } = current();
      const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 4 });
      await expectFailure(staged.commit(), 'EINVAL');
      await staged.discard();
      expect(await tempsIn(root)).toEqual([]);
    });
  });
}
