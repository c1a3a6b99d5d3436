import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryFileSystem, SimulatedCrash, type FaultCode } from '../../src/adapters/node/memory/memory-file-system.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';
import { caught } from './memory-adapter-fixtures.js';
import { NEW, OLD, contentOf, text, withBinary } from './memory-file-system-fixtures.js';

const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

describe('MemoryFileSystem model', () => {
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
