import { createHash } from 'node:crypto';
import { Volume } from 'memfs';
import { describe, expect, it } from 'vitest';
import {
  MemoryFileSystem,
  SimulatedCrash,
  type FaultCode,
  type JournalEntry,
} from '../../src/adapters/node/memory/memory-file-system.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';
import { fileSystemContract } from '../contracts/file-system.contract.js';

fileSystemContract('MemoryFileSystem', async () => ({
  fs: MemoryFileSystem.fromTree({ '/sandbox': { directory: true } }),
  root: '/sandbox',
  cleanup: async () => undefined,
}));

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');
const OLD = 'old binary, version 1';
const NEW = 'new binary, version 2 (longer)';

async function contentOf(fs: MemoryFileSystem, path: string): Promise<string | null> {
  const bytes = await fs.readFile(path, 1 << 20);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

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

const withBinary = (): MemoryFileSystem => MemoryFileSystem.fromTree({ '/d/a': { file: OLD, mode: 0o644 } });

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

  describe('faults', () => {
    for (const code of ['ENOSPC', 'EIO', 'EROFS'] as const satisfies readonly FaultCode[]) {
      it(`failAt(k, ${code}) at each op of writeFileAtomic fails with ${code} and leaves no temp`, async () => {
        for (let k = 0; k < 4; k += 1) {
          const fs = withBinary();
          fs.failAt(k, code);
          const error = await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o755 }));
          expect(error).toBeInstanceOf(FileSystemError);
          expect(error).toMatchObject({ code });
          const prefix = fs.reboot('prefix');
          // Only the last op (fsync-dir) comes after the rename: then the new content is visible.
          expect(await contentOf(prefix, '/d/a')).toBe(k === 3 ? NEW : OLD);
          expect(await prefix.listDirectory('/d')).toEqual(['a']);
        }
      });
    }

    it('failWhen matches ops by kind and path, and the cleanup is journalled', async () => {
      const fs = withBinary();
      fs.failWhen((op) => op.op === 'rename' && op.path === '/d/a', 'ENOSPC');
      expect(await caught(fs.copyFileAtomic('/d/a', '/d/a', { mode: 0o755, maxBytes: 100 }))).toMatchObject({
        code: 'ENOSPC',
      });
      expect(fs.journal.map((entry) => entry.op)).toEqual(['create-temp', 'fsync-file', 'cleanup']);
      expect(fs.journal.map((entry) => entry.index)).toEqual([0, 1, 3]);
      await fs.writeFileAtomic('/d/other', text('fine'), { mode: 0o644 });
      expect(await contentOf(fs, '/d/other')).toBe('fine');
    });

    it('a beforeMutation hook that throws aborts the op and the failure propagates as thrown', async () => {
      const seen: string[] = [];
      const refusal = new Error('the active slot is written');
      const fs = MemoryFileSystem.fromTree(
        { '/d/a': { file: OLD } },
        {
          beforeMutation: (op) => {
            seen.push(`${op.index} ${op.op}`);
            if (op.op === 'rename' && op.path === '/d/a') throw refusal;
          },
        },
      );
      expect(await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o755 }))).toBe(refusal);
      expect(seen).toEqual(['0 create-temp', '1 fsync-file', '2 rename', '3 cleanup']);
      expect(await contentOf(fs, '/d/a')).toBe(OLD);
      expect(await fs.listDirectory('/d')).toEqual(['a']);
    });
  });

  describe('crashes', () => {
    it('every call after a crash throws SimulatedCrash, which is not a FileSystemError', async () => {
      const fs = withBinary();
      fs.crashAt(0);
      const crash = await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o644 }));
      expect(crash).toBeInstanceOf(SimulatedCrash);
      expect(crash).not.toBeInstanceOf(FileSystemError);
      expect(fs.crashed).toBe(true);
      const calls: (() => Promise<unknown>)[] = [
        () => fs.lstat('/d/a'),
        () => fs.readLink('/d/a'),
        () => fs.resolve('/d/a'),
        () => fs.readFile('/d/a', 100),
        () => fs.hashFile('/d/a', 100),
        () => fs.listDirectory('/d'),
        () => fs.writeFileAtomic('/d/b', text('x'), { mode: 0o644 }),
        () => fs.copyFileAtomic('/d/a', '/d/b', { mode: 0o644, maxBytes: 100 }),
        () => fs.replaceSymlink('/d/l', 'a'),
        () => fs.remove('/d/a'),
        () => fs.ensureDirectory('/d/e', 0o755),
      ];
      for (const call of calls) expect(await caught(call())).toBeInstanceOf(SimulatedCrash);
      expect(fs.snapshot()).toEqual(withBinary().snapshot());
    });

    it('reboot gives a fresh instance: new journal, index 0, no crash point or faults', async () => {
      const fs = withBinary();
      fs.failWhen(() => true, 'EIO');
      fs.crashAt(1);
      await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o644 }));
      const rebooted = fs.reboot('prefix');
      expect(rebooted.journal).toEqual([]);
      expect(rebooted.opCount).toBe(0);
      expect(rebooted.crashed).toBe(false);
      await rebooted.writeFileAtomic('/d/a', text(NEW), { mode: 0o644 });
      expect(await contentOf(rebooted, '/d/a')).toBe(NEW);
    });

    it('temp names skip leftovers from an earlier life', async () => {
      const fs = withBinary();
      fs.crashAt(1);
      await caught(fs.writeFileAtomic('/d/a', text(NEW), { mode: 0o644 }));
      const rebooted = fs.reboot('prefix');
      expect(await rebooted.listDirectory('/d')).toEqual(['.a.tmp-0', 'a']);
      await rebooted.writeFileAtomic('/d/a', text(NEW), { mode: 0o644 });
      expect(rebooted.journal[0]).toMatchObject({ op: 'create-temp', path: '/d/.a.tmp-1' });
    });
  });

  describe('tree, owners and snapshots', () => {
    it('snapshots every entry, symlinks included, with modes, owners and digests', async () => {
      const fs = MemoryFileSystem.fromTree(
        {
          '/s/blue': { file: 'blue', mode: 0o755 },
          '/s/current': { symlink: 'blue' },
          '/etc': { directory: true, mode: 0o700, uid: 5 },
        },
        { uid: 0 },
      );
      expect(fs.snapshot()).toEqual({
        '/etc': { kind: 'directory', mode: 0o700, uid: 5 },
        '/s': { kind: 'directory', mode: 0o755, uid: 0 },
        '/s/blue': { kind: 'file', mode: 0o755, uid: 0, size: 4, sha256: sha256Hex('blue') },
        '/s/current': { kind: 'symlink', uid: 0, target: 'blue' },
      });
      expect(Object.keys(fs.snapshot())).toEqual(['/etc', '/s', '/s/blue', '/s/current']);
      expect(fs.reboot('synced').snapshot()).toEqual(fs.snapshot());
    });

    it('reports owners from setOwner and the uid option, and they survive reboot', async () => {
      const fs = MemoryFileSystem.fromTree({ '/d/a': { file: 'x' }, '/d/l': { symlink: 'a' } }, { uid: 1000 });
      fs.setOwner('/d/l', 0);
      expect(await fs.lstat('/d/a')).toMatchObject({ uid: 1000 });
      expect(await fs.lstat('/d/l')).toMatchObject({ uid: 0 });
      await fs.writeFileAtomic('/d/b', text('y'), { mode: 0o644 });
      expect(await fs.lstat('/d/b')).toMatchObject({ uid: 1000 });
      expect(await fs.reboot('synced').lstat('/d/l')).toMatchObject({ uid: 0 });
    });

    it('acts as root: modes are kept as given and never block access', async () => {
      const fs = MemoryFileSystem.fromTree({
        '/locked': { directory: true, mode: 0o000 },
        '/locked/f': { file: 'secret', mode: 0o000 },
      });
      expect(await contentOf(fs, '/locked/f')).toBe('secret');
      await fs.writeFileAtomic('/locked/g', text('x'), { mode: 0o000 });
      expect(await fs.lstat('/locked/g')).toMatchObject({ mode: 0o000 });
      expect(await fs.lstat('/locked')).toMatchObject({ mode: 0o000 });
    });
  });
});
