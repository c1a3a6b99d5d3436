import { Volume } from 'memfs';
import { describe, expect, it } from 'vitest';
import {
  MemoryFileSystem,
  SimulatedCrash,
  type JournalEntry,
} from '../../src/adapters/node/memory/memory-file-system.js';
import { fileSystemContract } from '../contracts/file-system.contract.js';
import { caught } from './memory-adapter-fixtures.js';
import { NEW, OLD, contentOf, text, withBinary } from './memory-file-system-fixtures.js';

fileSystemContract('MemoryFileSystem', async () => ({
  fs: MemoryFileSystem.fromTree({ '/sandbox': { directory: true } }),
  root: '/sandbox',
  cleanup: async () => undefined,
}));

/** Runs `action` on a fresh fs crashing at each op in turn; `check` sees the dead fs and k. */
async function forEveryCrashPoint(
  make: () => MemoryFileSystem,
  action: (fs: MemoryFileSystem) => Promise<unknown>,
  check: (crashed: MemoryFileSystem, k: number, opCount: number) => Promise<void>,
): Promise<void> {
  const dryRun = make();
  await action(dryRun);
  expect(dryRun.opCount).toBeGreaterThan(0);
  for (let k = 0; k < dryRun.opCount; k += 1) {
    const fs = make();
    fs.crashAt(k);
    expect(await caught(action(fs))).toBeInstanceOf(SimulatedCrash);
    await check(fs, k, dryRun.opCount);
  }
}

describe('MemoryFileSystem model', () => {
  it('journals the micro-steps of writeFileAtomic', async () => {
    const fs = withBinary();
    await fs.writeFileAtomic('/d/a', text('xyz'), { mode: 0o755 });
    expect(fs.journal).toEqual<JournalEntry[]>([
      { index: 0, op: 'create-temp', path: '/d/.a.tmp-0', detail: '3 bytes' },
      { index: 1, op: 'fsync-file', path: '/d/.a.tmp-0' },
      { index: 2, op: 'rename', path: '/d/a', detail: '/d/.a.tmp-0' },
      { index: 3, op: 'fsync-dir', path: '/d' },
    ]);
    expect(fs.opCount).toBe(4);
  });

  it('journals replaceSymlink, remove and ensureDirectory; reads are not ops', async () => {
    const fs = MemoryFileSystem.fromTree({ '/d/f': { file: 'x' } });
    await fs.replaceSymlink('/d/l', 'f');
    await fs.remove('/d/f');
    await fs.ensureDirectory('/d/n', 0o750);
    await fs.readFile('/d/l', 10);
    await fs.lstat('/d/n');
    expect(fs.journal.map(({ op, path }) => `${op} ${path}`)).toEqual([
      'symlink-temp /d/.l.tmp-0',
      'rename /d/l',
      'fsync-dir /d',
      'unlink /d/f',
      'fsync-dir /d',
      'fsync-dir /',
      'mkdir /d/n',
      'fsync-dir /d',
    ]);
  });

  it('relies on memfs keeping the inode across rename', () => {
    const vol = Volume.fromJSON({ '/d/new': 'n', '/d/old': 'o' });
    const ino = vol.statSync('/d/new').ino;
    vol.renameSync('/d/new', '/d/old');
    expect(vol.statSync('/d/old').ino).toBe(ino);
  });

  it('writeFileAtomic over an existing file: a crash at any op leaves the old or the new content, never a mix', async () => {
    await forEveryCrashPoint(
      withBinary,
      (fs) => fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o755 }),
      async (crashed, k) => {
        const afterRename = k >= 3;
        const prefix = crashed.reboot('prefix');
        expect(await contentOf(prefix, '/d/a')).toBe(afterRename ? NEW : OLD);
        expect((await prefix.lstat('/d/a'))?.mode).toBe(afterRename ? 0o755 : 0o644);
        // The rename is durable only once the directory is fsynced, which is the last op.
        const synced = crashed.reboot('synced');
        expect(await contentOf(synced, '/d/a')).toBe(OLD);
        expect((await synced.lstat('/d/a'))?.mode).toBe(0o644);
        expect(await synced.listDirectory('/d')).toEqual(['a']);
      },
    );
  });

  it('writeFileAtomic that resolved survives power loss', async () => {
    const fs = withBinary();
    await fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o755 });
    const synced = fs.reboot('synced');
    expect(await contentOf(synced, '/d/a')).toBe(NEW);
    expect(synced.snapshot()).toEqual(fs.snapshot());
  });

  it('a brand-new entry never survives as a non-empty partial file', async () => {
    await forEveryCrashPoint(
      () => MemoryFileSystem.fromTree({ '/d': { directory: true } }),
      (fs) => fs.writeFileAtomic('/d/new', text(NEW), { mode: 0o644 }),
      async (crashed, k) => {
        for (const mode of ['prefix', 'synced'] as const) {
          const rebooted = crashed.reboot(mode);
          const content = await contentOf(rebooted, '/d/new');
          expect([null, NEW]).toContain(content);
          if (mode === 'synced') expect(content).toBeNull();
          if (mode === 'prefix') expect(content).toBe(k >= 3 ? NEW : null);
          for (const [path, entry] of Object.entries(rebooted.snapshot())) {
            if (path.startsWith('/d/') && entry.kind === 'file') expect([0, NEW.length]).toContain(entry.size);
          }
        }
      },
    );
  });

  it('models the zero-length-file hazard: a durable entry whose data was never fsynced comes back empty', async () => {
    const fs = withBinary();
    fs.failWhen((op) => op.op === 'fsync-file' || op.op === 'cleanup', 'EIO');
    expect(await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o755 }))).toMatchObject({ code: 'EIO' });
    fs.clearFaults();
    // Another write fsyncs /d, which makes the leftover temp's entry durable, but not its data.
    await fs.writeFileAtomic('/d/b', text('b'), { mode: 0o644 });
    const synced = fs.reboot('synced');
    expect(await synced.listDirectory('/d')).toEqual(['.a.tmp-0', 'a', 'b']);
    expect(await synced.lstat('/d/.a.tmp-0')).toMatchObject({ kind: 'file', size: 0, mode: 0o600 });
    expect(await contentOf(synced, '/d/a')).toBe(OLD);
  });

  it('replaceSymlink: a crash at any op leaves the link present with the old or the new text', async () => {
    const make = (): MemoryFileSystem =>
      MemoryFileSystem.fromTree({
        '/s/blue': { directory: true },
        '/s/green': { directory: true },
        '/s/current': { symlink: 'blue' },
      });
    await forEveryCrashPoint(
      make,
      (fs) => fs.replaceSymlink('/s/current', 'green'),
      async (crashed, k) => {
        const prefix = crashed.reboot('prefix');
        expect(await prefix.readLink('/s/current')).toBe(k >= 2 ? 'green' : 'blue');
        const synced = crashed.reboot('synced');
        expect(await synced.readLink('/s/current')).toBe('blue');
        for (const rebooted of [prefix, synced]) {
          expect(await rebooted.lstat('/s/blue')).toMatchObject({ kind: 'directory' });
          expect(await rebooted.lstat('/s/green')).toMatchObject({ kind: 'directory' });
        }
      },
    );
  });

  it('mkdir and unlink are durable only once the parent is fsynced', async () => {
    await forEveryCrashPoint(
      () => MemoryFileSystem.fromTree({ '/d/f': { file: 'x' } }),
      async (fs) => {
        await fs.ensureDirectory('/d/n', 0o750);
        await fs.remove('/d/f');
      },
      async (crashed, k) => {
        // ops: fsync-dir /, mkdir /d/n, fsync-dir /d, unlink /d/f, fsync-dir /d
        const synced = crashed.reboot('synced');
        expect((await synced.lstat('/d/n'))?.kind).toBe(k >= 3 ? 'directory' : undefined);
        expect(await synced.lstat('/d/f')).toMatchObject({ kind: 'file' });
        const prefix = crashed.reboot('prefix');
        expect(await prefix.lstat('/d/n')).toEqual(
          k >= 2 ? expect.objectContaining({ kind: 'directory', mode: 0o750 }) : null,
        );
        expect((await prefix.lstat('/d/f'))?.kind).toBe(k >= 4 ? undefined : 'file');
      },
    );
  });
});
