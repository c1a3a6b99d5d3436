import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MemoryFileSystem,
  SimulatedCrash,
  type JournalEntry,
  type RebootMode,
} from '../../src/adapters/node/memory/memory-file-system.js';
import { sha256FromHex } from '../../src/domain/common/digest.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';

const OLD = 'old binary, version 1';
const NEW = 'new binary, version 2 (longer)';
const NEW_DIGEST = sha256FromHex(createHash('sha256').update(NEW).digest('hex'));
const OPTIONS = { mode: 0o755, maxBytes: 1000, sha256: NEW_DIGEST };

/** A slot holding OLD and a private staged file holding NEW, all durable. */
const host = (): MemoryFileSystem =>
  MemoryFileSystem.fromTree({
    '/slots/agent-blue': { file: OLD, mode: 0o755 },
    '/slots/.agent-blue.tmp-download': { file: NEW, mode: 0o600 },
  });

const move = (fs: MemoryFileSystem): Promise<unknown> =>
  fs.moveFileAtomic('/slots/.agent-blue.tmp-download', '/slots/agent-blue', OPTIONS);

async function contentOf(fs: MemoryFileSystem, path: string): Promise<string | null> {
  const bytes = await fs.readFile(path, 1 << 20);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

describe('MemoryFileSystem model of moveFileAtomic', () => {
  it('journals fsync-file, rename and fsync-dir, and no create-temp', async () => {
    const fs = host();
    await move(fs);
    expect(fs.journal.map((entry: JournalEntry) => [entry.op, entry.path])).toEqual([
      ['fsync-file', '/slots/.agent-blue.tmp-download'],
      ['rename', '/slots/agent-blue'],
      ['fsync-dir', '/slots'],
    ]);
    expect(fs.snapshot()).toMatchObject({ '/slots/agent-blue': { kind: 'file', mode: 0o755 } });
    expect(await contentOf(fs, '/slots/agent-blue')).toBe(NEW);
    expect(await fs.lstat('/slots/.agent-blue.tmp-download')).toBeNull();
  });

  it.each<RebootMode>(['prefix', 'synced'])(
    'after a crash at any op and a %s reboot, the slot is whole and a repeat converges',
    async (mode) => {
      const opCount = 3;
      for (let k = 0; k < opCount; k += 1) {
        const fs = host();
        fs.crashAt(k);
        await expect(move(fs)).rejects.toBeInstanceOf(SimulatedCrash);
        const rebooted = fs.reboot(mode);
        expect([OLD, NEW]).toContain(await contentOf(rebooted, '/slots/agent-blue'));
        // Power loss before the directory fsync keeps the old entry: the rename was not durable.
        if (mode === 'synced') expect(await contentOf(rebooted, '/slots/agent-blue')).toBe(OLD);
        await move(rebooted);
        expect(await contentOf(rebooted, '/slots/agent-blue')).toBe(NEW);
        expect(await rebooted.lstat('/slots/agent-blue')).toMatchObject({ kind: 'file', mode: 0o755 });
        expect(await rebooted.listDirectory('/slots')).toEqual(['agent-blue']);
      }
    },
  );

  it('survives power loss once it resolved: content, mode and entry were all made durable', async () => {
    const fs = host();
    await move(fs);
    const rebooted = fs.reboot('synced');
    expect(await contentOf(rebooted, '/slots/agent-blue')).toBe(NEW);
    expect(rebooted.snapshot()).toMatchObject({ '/slots/agent-blue': { kind: 'file', mode: 0o755 } });
    expect(await rebooted.listDirectory('/slots')).toEqual(['agent-blue']);
  });

  it.each([0, 1, 2])('an injected ENOSPC at op %i fails with that code and leaves a whole slot', async (k) => {
    const fs = host();
    fs.failAt(k, 'ENOSPC');
    const error = await move(fs).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileSystemError);
    expect((error as FileSystemError).code).toBe('ENOSPC');
    expect([OLD, NEW]).toContain(await contentOf(fs, '/slots/agent-blue'));
  });
});
