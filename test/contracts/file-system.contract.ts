import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSystemError, type FileSystemErrorCode } from '../../src/domain/common/port-errors.js';
import type { FileSystem } from '../../src/ports/node/file-system.js';
import { moveFileAtomicContract } from './move-file.contract.js';

export interface FileSystemFixture {
  readonly fs: FileSystem;
  /** An existing, empty, writable directory; every path the suite touches lies below it. */
  readonly root: string;
  cleanup(): Promise<void>;
  /** Creates a FIFO at `path`, for adapters that can hold special files (the real one). */
  makeFifo?(path: string): Promise<void>;
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));
const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export async function expectFailure(promise: Promise<unknown>, code: FileSystemErrorCode): Promise<void> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FileSystemError);
  expect((error as FileSystemError).code).toBe(code);
}

type Described = { kind: string; mode?: number; content?: string | null; link?: string | null };

/** The whole tree under `directory` as seen through the port: the state the assertions compare. */
export async function describeTree(fs: FileSystem, directory: string): Promise<Record<string, Described>> {
  const result: Record<string, Described> = {};
  for (const name of (await fs.listDirectory(directory)) ?? []) {
    const path = `${directory}/${name}`;
    const stat = await fs.lstat(path);
    if (stat === null) continue;
    if (stat.kind === 'symlink') result[path] = { kind: 'symlink', link: await fs.readLink(path) };
    else if (stat.kind === 'file')
      result[path] = { kind: 'file', mode: stat.mode, content: decode(await fs.readFile(path, 1 << 20)) };
    else if (stat.kind === 'directory') {
      result[path] = { kind: 'directory', mode: stat.mode };
      Object.assign(result, await describeTree(fs, path));
    } else result[path] = { kind: stat.kind };
  }
  return result;
}

/** Behaviour every FileSystem must show; assertions are on error codes and resulting state only. */
export function fileSystemContract(name: string, makeFs: () => Promise<FileSystemFixture>): void {
  describe(`FileSystem contract: ${name}`, () => {
    let fs: FileSystem;
    let root: string;
    let cleanup: () => Promise<void>;
    let makeFifo: ((path: string) => Promise<void>) | undefined;

    beforeEach(async () => {
      const fixture = await makeFs();
      ({ fs, root, makeFifo } = fixture);
      cleanup = () => fixture.cleanup();
    });
    afterEach(async () => {
      await cleanup();
    });

    const at = (relative: string): string => `${root}/${relative}`;
    const write = (relative: string, content: string, mode = 0o644): Promise<void> =>
      fs.writeFileAtomic(at(relative), text(content), { mode });
    const tempsIn = async (directory: string): Promise<string[]> =>
      ((await fs.listDirectory(directory)) ?? []).filter((entry) => entry.includes('.tmp-'));

    describe('writeFileAtomic', () => {
      it('creates a file with the given content and mode', async () => {
        await write('a', 'hello', 0o640);
        expect(decode(await fs.readFile(at('a'), 100))).toBe('hello');
        expect(await fs.lstat(at('a'))).toMatchObject({ kind: 'file', mode: 0o640, size: 5 });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('replaces the content and the mode of an existing file', async () => {
        await write('a', 'old content', 0o644);
        await write('a', 'new', 0o755);
        expect(decode(await fs.readFile(at('a'), 100))).toBe('new');
        expect(await fs.lstat(at('a'))).toMatchObject({ kind: 'file', mode: 0o755, size: 3 });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('replaces a symlink itself, never the file it points to', async () => {
        await write('target', 'kept');
        await fs.replaceSymlink(at('link'), 'target');
        await write('link', 'replaced');
        expect(await fs.lstat(at('link'))).toMatchObject({ kind: 'file' });
        expect(decode(await fs.readFile(at('target'), 100))).toBe('kept');
      });

      it('fails with ENOENT when the parent is missing, and EISDIR onto a directory, leaving no temp', async () => {
        await expectFailure(write('missing/a', 'x'), 'ENOENT');
        await fs.ensureDirectory(at('dir'), 0o755);
        await expectFailure(write('dir', 'x'), 'EISDIR');
        expect(await fs.lstat(at('dir'))).toMatchObject({ kind: 'directory' });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('is idempotent', async () => {
        await write('a', 'same', 0o600);
        const once = await describeTree(fs, root);
        await write('a', 'same', 0o600);
        expect(await describeTree(fs, root)).toEqual(once);
      });
    });

    describe('copyFileAtomic', () => {
      it('copies the bytes with the given mode and returns their digest', async () => {
        await write('source', 'payload', 0o600);
        const digest = await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o755, maxBytes: 7 });
        expect(digest).toEqual({ sha256: sha256Hex('payload'), bytes: 7 });
        expect(decode(await fs.readFile(at('target'), 100))).toBe('payload');
        expect(await fs.lstat(at('target'))).toMatchObject({ kind: 'file', mode: 0o755 });
        expect(await fs.hashFile(at('target'), 100)).toEqual(digest);
        expect(await tempsIn(root)).toEqual([]);
      });

      it('follows a symlink at the source and replaces an existing target', async () => {
        await write('source', 'new bytes');
        await fs.replaceSymlink(at('via'), 'source');
        await write('target', 'old bytes');
        await fs.copyFileAtomic(at('via'), at('target'), { mode: 0o644, maxBytes: 100 });
        expect(decode(await fs.readFile(at('target'), 100))).toBe('new bytes');
      });

      it('refuses past maxBytes with ETOOBIG, leaving the target unchanged and no temp', async () => {
        await write('source', 'eight by');
        await write('target', 'unchanged', 0o644);
        await expectFailure(fs.copyFileAtomic(at('source'), at('target'), { mode: 0o755, maxBytes: 7 }), 'ETOOBIG');
        expect(decode(await fs.readFile(at('target'), 100))).toBe('unchanged');
        expect(await fs.lstat(at('target'))).toMatchObject({ mode: 0o644 });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('fails with ENOENT for a missing source, creating nothing', async () => {
        await expectFailure(fs.copyFileAtomic(at('absent'), at('target'), { mode: 0o644, maxBytes: 100 }), 'ENOENT');
        expect(await fs.listDirectory(root)).toEqual([]);
      });

      it('is idempotent', async () => {
        await write('source', 'payload');
        const first = await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o700, maxBytes: 100 });
        const once = await describeTree(fs, root);
        expect(await fs.copyFileAtomic(at('source'), at('target'), { mode: 0o700, maxBytes: 100 })).toEqual(first);
        expect(await describeTree(fs, root)).toEqual(once);
      });
    });

    moveFileAtomicContract(() => ({ fs, root }));

    describe('replaceSymlink', () => {
      it('creates a link, then swaps an existing one to a new target', async () => {
        await fs.replaceSymlink(at('current'), 'blue');
        expect(await fs.readLink(at('current'))).toBe('blue');
        await fs.replaceSymlink(at('current'), 'green');
        expect(await fs.readLink(at('current'))).toBe('green');
        expect(await fs.lstat(at('current'))).toMatchObject({ kind: 'symlink' });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('replaces a regular file with a link', async () => {
        await write('legacy', 'binary');
        await fs.replaceSymlink(at('legacy'), 'slots/blue');
        expect(await fs.lstat(at('legacy'))).toMatchObject({ kind: 'symlink' });
        expect(await fs.readLink(at('legacy'))).toBe('slots/blue');
      });

      it('swaps a link to a directory without moving the directories', async () => {
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
        await fs.ensureDirectory(at('dir'), 0o750);
        await write('dir/inside', 'x');
        const before = await describeTree(fs, root);
        await expectFailure(fs.replaceSymlink(at('dir'), 'elsewhere'), 'EISDIR');
        expect(await describeTree(fs, root)).toEqual(before);
      });

      it('keeps relative link text verbatim and resolve follows it', async () => {
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
        await fs.replaceSymlink(at('current'), 'blue');
        const once = await describeTree(fs, root);
        await fs.replaceSymlink(at('current'), 'blue');
        expect(await describeTree(fs, root)).toEqual(once);
      });
    });

    describe('reading', () => {
      it('resolve reports missing for a dangling link and loop for a link cycle', async () => {
        await fs.replaceSymlink(at('dangling'), 'nowhere');
        await fs.replaceSymlink(at('a'), 'b');
        await fs.replaceSymlink(at('b'), 'a');
        expect(await fs.resolve(at('dangling'))).toEqual({ kind: 'missing' });
        expect(await fs.resolve(at('absent'))).toEqual({ kind: 'missing' });
        expect(await fs.resolve(at('a'))).toEqual({ kind: 'loop' });
      });

      it('lstat describes each kind without following links, and null when absent', async () => {
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
        await write('file', 'x');
        await fs.replaceSymlink(at('link'), '/absolute/target');
        expect(await fs.readLink(at('link'))).toBe('/absolute/target');
        expect(await fs.readLink(at('absent'))).toBeNull();
        await expectFailure(fs.readLink(at('file')), 'EINVAL');
        await expectFailure(fs.readLink(root), 'EINVAL');
      });

      it('readFile follows links, returns null when absent, and refuses past maxBytes', async () => {
        await write('file', '12345');
        await fs.replaceSymlink(at('link'), 'file');
        expect(decode(await fs.readFile(at('link'), 5))).toBe('12345');
        expect(await fs.readFile(at('absent'), 5)).toBeNull();
        await expectFailure(fs.readFile(at('file'), 4), 'ETOOBIG');
        await expectFailure(fs.readFile(root, 100), 'EISDIR');
      });

      it('readFile without following links reads a file, refuses a link at the path (ELOOP), and null when absent', async () => {
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
        if (makeFifo === undefined) return; // the model holds no special files
        await makeFifo(at('fifo'));
        await fs.replaceSymlink(at('to-fifo'), 'fifo');
        await expectFailure(fs.readFile(at('fifo'), 100), 'ENOTREG');
        await expectFailure(fs.readFile(at('to-fifo'), 100), 'ENOTREG');
        await expectFailure(fs.readFile(at('to-fifo'), 100, { followLinks: false }), 'ELOOP');
      });

      it('hashFile digests the content, refuses past maxBytes, and fails with ENOENT when absent', async () => {
        await write('file', 'digest me');
        expect(await fs.hashFile(at('file'), 9)).toEqual({ sha256: sha256Hex('digest me'), bytes: 9 });
        await write('empty', '');
        expect(await fs.hashFile(at('empty'), 0)).toEqual({ sha256: sha256Hex(''), bytes: 0 });
        await expectFailure(fs.hashFile(at('file'), 8), 'ETOOBIG');
        await expectFailure(fs.hashFile(at('absent'), 8), 'ENOENT');
      });

      it('listDirectory lists names sorted, null when absent, ENOTDIR for a file', async () => {
        await write('b', '');
        await write('a', '');
        await fs.ensureDirectory(at('c'), 0o755);
        await fs.replaceSymlink(at('B'), 'b');
        expect(await fs.listDirectory(root)).toEqual(['B', 'a', 'b', 'c']);
        expect(await fs.listDirectory(at('absent'))).toBeNull();
        await expectFailure(fs.listDirectory(at('a')), 'ENOTDIR');
      });
    });

    describe('remove', () => {
      it('removes a file, and a link without touching its target', async () => {
        await write('file', 'x');
        await fs.replaceSymlink(at('link'), 'file');
        await fs.remove(at('link'));
        expect(await fs.lstat(at('link'))).toBeNull();
        expect(await fs.lstat(at('file'))).toMatchObject({ kind: 'file' });
        await fs.remove(at('file'));
        expect(await fs.listDirectory(root)).toEqual([]);
      });

      it('treats an absent entry (or absent parent) as success and is idempotent', async () => {
        await write('file', 'x');
        await fs.remove(at('file'));
        await fs.remove(at('file'));
        await fs.remove(at('absent/deeper'));
        expect(await fs.listDirectory(root)).toEqual([]);
      });

      it('refuses a directory with EISDIR', async () => {
        await fs.ensureDirectory(at('dir'), 0o755);
        await expectFailure(fs.remove(at('dir')), 'EISDIR');
        expect(await fs.lstat(at('dir'))).toMatchObject({ kind: 'directory' });
      });
    });

    describe('readRange', () => {
      it('returns the bytes from an offset, fewer at the end, none past it, null when absent, following links', async () => {
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

    describe('stageFile', () => {
      const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

      it('writes chunks to a temp, and only commit replaces the target with their content and mode', async () => {
        await write('target', 'old');
        const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 100 });
        await staged.write(bytes('new '));
        await staged.write(bytes('content'));
        expect(new TextDecoder().decode((await fs.readFile(at('target'), 100)) ?? new Uint8Array())).toBe('old');
        expect(await staged.seal()).toEqual({ bytes: 11 });
        await staged.commit();
        expect(new TextDecoder().decode((await fs.readFile(at('target'), 100)) ?? new Uint8Array())).toBe(
          'new content',
        );
        expect(await fs.lstat(at('target'))).toMatchObject({ kind: 'file', mode: 0o755 });
        expect(await tempsIn(root)).toEqual([]);
      });

      it('discard leaves the target as it was and no temp, before or after seal', async () => {
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
        const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 4 });
        await staged.write(bytes('1234'));
        await expectFailure(staged.write(bytes('5')), 'ETOOBIG');
        expect(await fs.lstat(at('target'))).toBeNull();
        expect(await tempsIn(root)).toEqual([]);
      });

      it('refuses commit before seal', async () => {
        const staged = await fs.stageFile(at('target'), { mode: 0o755, maxBytes: 4 });
        await expectFailure(staged.commit(), 'EINVAL');
        await staged.discard();
        expect(await tempsIn(root)).toEqual([]);
      });
    });

    describe('ensureDirectory', () => {
      it('creates the directory with the exact mode and missing parents with 0755, whatever the umask', async () => {
        await fs.ensureDirectory(at('a/b/c'), 0o750);
        for (const path of ['a', 'a/b'])
          expect(await fs.lstat(at(path))).toMatchObject({ kind: 'directory', mode: 0o755 });
        expect(await fs.lstat(at('a/b/c'))).toMatchObject({ kind: 'directory', mode: 0o750 });
        await fs.ensureDirectory(at('group-writable'), 0o770);
        expect(await fs.lstat(at('group-writable'))).toMatchObject({ mode: 0o770 });
      });

      it('keeps the mode of existing directories and is idempotent', async () => {
        await fs.ensureDirectory(at('a'), 0o700);
        await fs.ensureDirectory(at('a/b'), 0o750);
        const once = await describeTree(fs, root);
        await fs.ensureDirectory(at('a/b'), 0o750);
        expect(await describeTree(fs, root)).toEqual(once);
        expect(await fs.lstat(at('a'))).toMatchObject({ mode: 0o700 });
      });

      it('follows a symlink to a directory', async () => {
        await fs.ensureDirectory(at('real'), 0o755);
        await fs.replaceSymlink(at('alias'), 'real');
        await fs.ensureDirectory(at('alias/sub'), 0o750);
        expect(await fs.lstat(at('real/sub'))).toMatchObject({ kind: 'directory', mode: 0o750 });
      });

      it('fails with ENOTDIR on an existing file or dangling link, at the end or on the way', async () => {
        await write('file', 'x');
        await fs.replaceSymlink(at('dangling'), 'nowhere');
        await expectFailure(fs.ensureDirectory(at('file'), 0o755), 'ENOTDIR');
        await expectFailure(fs.ensureDirectory(at('file/below'), 0o755), 'ENOTDIR');
        await expectFailure(fs.ensureDirectory(at('dangling'), 0o755), 'ENOTDIR');
        expect(await fs.listDirectory(root)).toEqual(['dangling', 'file']);
      });
    });
  });
}
