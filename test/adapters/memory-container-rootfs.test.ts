import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { ContainerError } from '../../src/domain/common/port-errors.js';
import { caught } from './memory-adapter-fixtures.js';

const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

describe('MemoryContainerRootfs', () => {
  const MACHINES = '/var/lib/machines';
  const BINARY = '/usr/local/bin/aks-flex-node';
  const baseTree: TreeSpec = {
    '/opt/new': { file: 'NEW BINARY' },
    '/usr/local/bin/aks-flex-node': { file: 'HOST BINARY', mode: 0o755 },
    '/var/lib/machines/m1/usr/local/bin': { directory: true },
    '/var/lib/machines/bare': { directory: true },
  };

  function make(
    tree: TreeSpec = baseTree,
    maxBytes = 1 << 20,
  ): { fs: MemoryFileSystem; rootfs: MemoryContainerRootfs } {
    const fs = MemoryFileSystem.fromTree(tree);
    const rootfs = new MemoryContainerRootfs({
      fs,
      machinesDir: MACHINES,
      binaryPath: BINARY,
      activeMachine: () => 'm1',
      maxBytes,
    });
    return { fs, rootfs };
  }

  it('installs atomically with mode 0755, logs it, and reports the same digest', async () => {
    const { fs, rootfs } = make();
    expect(await rootfs.activeMachine()).toBe('m1');
    expect(await rootfs.digest('m1')).toBeNull();
    const written = await rootfs.install('m1', '/opt/new');
    expect(written).toEqual({ sha256: sha256Hex('NEW BINARY'), bytes: 10 });
    expect((await fs.lstat(`${MACHINES}/m1${BINARY}`))?.mode).toBe(0o755);
    expect(await rootfs.digest('m1')).toEqual(written);
    expect(rootfs.installs).toEqual([{ machine: 'm1', sha256: written.sha256 }]);
  });

  it('creates missing directories below the machine with 0755', async () => {
    const { fs, rootfs } = make();
    expect(await rootfs.digest('bare')).toBeNull();
    await rootfs.install('bare', '/opt/new');
    expect(await fs.lstat(`${MACHINES}/bare/usr/local`)).toMatchObject({ kind: 'directory', mode: 0o755 });
    expect((await rootfs.digest('bare'))?.sha256).toBe(sha256Hex('NEW BINARY'));
  });

  it('accepts an async activeMachine source', async () => {
    const fs = MemoryFileSystem.fromTree(baseTree);
    const rootfs = new MemoryContainerRootfs({
      fs,
      machinesDir: MACHINES,
      binaryPath: BINARY,
      activeMachine: async () => null,
      maxBytes: 1024,
    });
    expect(await rootfs.activeMachine()).toBeNull();
  });

  it.each(['../m1', 'a/b', '', '.hidden', 'x..y'])(
    'refuses the machine name %j without touching the tree',
    async (machine) => {
      const { fs, rootfs } = make();
      const before = fs.snapshot();
      const install = await caught(rootfs.install(machine, '/opt/new'));
      expect(install).toBeInstanceOf(ContainerError);
      expect((install as ContainerError).code).toBe('invalid-machine');
      expect(((await caught(rootfs.digest(machine))) as ContainerError).code).toBe('invalid-machine');
      expect(fs.snapshot()).toEqual(before);
    },
  );

  it.each([
    ['usr/local/bin', { '/var/lib/machines/evil/usr/local/bin': { symlink: '/usr/local/bin' } }],
    [
      'the binary itself',
      { '/var/lib/machines/evil/usr/local/bin/aks-flex-node': { symlink: '/usr/local/bin/aks-flex-node' } },
    ],
    ['the machine directory', { '/var/lib/machines/evil': { symlink: '/' } }],
  ] as const)('refuses a symlinked %s and leaves the host binary untouched', async (_where, planted) => {
    const { fs, rootfs } = make({ ...baseTree, ...planted });
    const before = fs.snapshot();
    const install = await caught(rootfs.install('evil', '/opt/new'));
    expect(install).toBeInstanceOf(ContainerError);
    expect((install as ContainerError).code).toBe('symlink-refused');
    expect(((await caught(rootfs.digest('evil'))) as ContainerError).code).toBe('symlink-refused');
    expect(fs.snapshot()).toEqual(before);
    expect((await fs.hashFile('/usr/local/bin/aks-flex-node', 1024)).sha256).toBe(sha256Hex('HOST BINARY'));
    expect(rootfs.installs).toEqual([]);
  });

  it('refuses a binary larger than maxBytes (too-large) and writes nothing', async () => {
    const { rootfs } = make(baseTree, 4);
    expect(((await caught(rootfs.install('m1', '/opt/new'))) as ContainerError).code).toBe('too-large');
    expect(await rootfs.digest('m1')).toBeNull();
  });

  it('reports a missing source as io', async () => {
    const { rootfs } = make();
    expect(((await caught(rootfs.install('m1', '/opt/missing'))) as ContainerError).code).toBe('io');
  });

  it('fails the next install or digest once when told to', async () => {
    const { rootfs } = make();
    rootfs.failNext('install');
    expect(((await caught(rootfs.install('m1', '/opt/new'))) as ContainerError).code).toBe('io');
    expect(rootfs.installs).toEqual([]);
    await rootfs.install('m1', '/opt/new');
    rootfs.failNext('digest');
    expect(((await caught(rootfs.digest('m1'))) as ContainerError).code).toBe('io');
    expect((await rootfs.digest('m1'))?.sha256).toBe(sha256Hex('NEW BINARY'));
  });
});
