import { describe, expect, it } from 'vitest';
import { MemoryFileSystem } from '../../src/adapters/node/memory/memory-file-system.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';

/** The model's FIFOs behave as the real adapter sees one: a special file that is never read. */
describe('MemoryFileSystem: a FIFO', () => {
  const withFifo = (): MemoryFileSystem => MemoryFileSystem.fromTree({ '/d/fifo': { fifo: true } });

  it('is a special file, reading it (directly or through a link) is ENOTREG, and it survives reboot', async () => {
    const fs = MemoryFileSystem.fromTree({ '/d/fifo': { fifo: true }, '/d/link': { symlink: 'fifo' } });
    expect(await fs.lstat('/d/fifo')).toMatchObject({ kind: 'other' });
    expect(await fs.resolve('/d/link')).toMatchObject({ kind: 'resolved', path: '/d/fifo', stat: { kind: 'other' } });
    for (const path of ['/d/fifo', '/d/link'])
      await expect(fs.readFile(path, 1024)).rejects.toMatchObject({ constructor: FileSystemError, code: 'ENOTREG' });
    await expect(fs.hashFile('/d/fifo', 1024)).rejects.toMatchObject({ code: 'ENOTREG' });
    expect(fs.snapshot()['/d/fifo']).toEqual({ kind: 'fifo', uid: 0 });
    for (const mode of ['prefix', 'synced'] as const)
      expect(await fs.reboot(mode).lstat('/d/fifo'), mode).toMatchObject({ kind: 'other' });
  });

  it('is gone once removed, and a file created after it is a regular file (memfs reuses inode numbers)', async () => {
    const fs = withFifo();
    await fs.remove('/d/fifo');
    expect(await fs.lstat('/d/fifo')).toBeNull();
    await fs.writeFileAtomic('/d/file', new TextEncoder().encode('x'), { mode: 0o644 });
    expect(await fs.lstat('/d/file')).toMatchObject({ kind: 'file' });
    expect(fs.reboot('synced').snapshot()).toEqual(fs.snapshot());
  });

  it('a file renamed over it replaces it', async () => {
    const fs = withFifo();
    await fs.writeFileAtomic('/d/fifo', new TextEncoder().encode('binary'), { mode: 0o755 });
    expect(await fs.lstat('/d/fifo')).toMatchObject({ kind: 'file', mode: 0o755 });
    expect(new TextDecoder().decode((await fs.readFile('/d/fifo', 1024)) ?? new Uint8Array())).toBe('binary');
  });
});
