import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NspawnContainerRootfs } from '../../../src/adapters/node/nspawn/nspawn-container-rootfs.js';
import { snapshotTree } from '../../support/real-tree.js';
import {
  BINARY_PATH,
  containerErrorCode,
  listDir,
  makeNspawnScratch,
  MACHINES,
  sha256Of,
  writeSource,
  type NspawnScratch,
} from './nspawn-fixture.js';

let host: NspawnScratch;

beforeEach(() => {
  host = makeNspawnScratch();
});

afterEach(() => {
  host.cleanup();
});

describe('NspawnContainerRootfs.install', () => {
  it('copies the source into the machine rootfs, creating missing directories 0755, and digests what it wrote', async () => {
    const rootfs = host.rootfs();

    const written = await rootfs.install('kube1', host.source);

    expect(readFileSync(host.target)).toEqual(readFileSync(host.source));
    expect(written).toEqual({ sha256: sha256Of(host.source), bytes: readFileSync(host.source).length });
    expect(lstatSync(host.target).mode & 0o7777).toBe(0o755);
    for (const directory of ['usr', 'usr/local', 'usr/local/bin']) {
      const stats = lstatSync(join(host.machinesDir, 'kube1', directory));
      expect(stats.isDirectory()).toBe(true);
      expect(stats.mode & 0o7777).toBe(0o755);
    }
    expect(listDir(join(host.machinesDir, 'kube1', 'usr/local/bin'))).toEqual(['aks-flex-node']);
    expect(await rootfs.digest('kube1')).toEqual(written);
  });

  it('replaces an existing copy atomically and leaves no temp', async () => {
    const rootfs = host.rootfs();
    await rootfs.install('kube1', host.source);
    chmodSync(host.target, 0o700);
    writeSource(host.source, 'agent v3, a little longer\n');

    const written = await rootfs.install('kube1', host.source);

    expect(readFileSync(host.target, 'utf8')).toBe('agent v3, a little longer\n');
    expect(written).toEqual({ sha256: sha256Of(host.source), bytes: 26 });
    expect(lstatSync(host.target).mode & 0o7777).toBe(0o755);
    expect(listDir(join(host.machinesDir, 'kube1', 'usr/local/bin'))).toEqual(['aks-flex-node']);
    expect(await rootfs.digest('kube1')).toEqual(written);
  });

  it('installs an empty binary (zero bytes is a size, not an absence)', async () => {
    writeSource(host.source, '');
    const written = await host.rootfs().install('kube1', host.source);
    expect(written.bytes).toBe(0);
    expect(await host.rootfs().digest('kube1')).toEqual(written);
  });

  it('refuses a source over maxBytes: old copy intact, no temp left', async () => {
    const rootfs = host.rootfs(16);
    await rootfs.install('kube1', host.source);
    const before = snapshotTree(host.machinesDir);
    writeSource(host.source, 'x'.repeat(17));

    expect(await containerErrorCode(rootfs.install('kube1', host.source))).toBe('too-large');

    expect(snapshotTree(host.machinesDir)).toEqual(before);
    expect(readFileSync(host.target, 'utf8')).toBe('agent v2\n');
  });

  it('accepts a source of exactly maxBytes', async () => {
    writeSource(host.source, 'y'.repeat(16));
    expect((await host.rootfs(16).install('kube1', host.source)).bytes).toBe(16);
  });

  it('sweeps stale temps of the binary (files and links, not directories) and leaves other entries alone', async () => {
    const bin = join(host.machinesDir, 'kube1', 'usr/local/bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, '.aks-flex-node.tmp-0a1b2c'), 'half a binary');
    writeFileSync(join(bin, '.aks-flex-node.tmp-ffffff'), '');
    symlinkSync(host.hostBinary, join(bin, '.aks-flex-node.tmp-link'));
    mkdirSync(join(bin, '.aks-flex-node.tmp-dir'));
    writeFileSync(join(bin, '.other.tmp-0a1b2c'), 'not ours');
    writeFileSync(join(bin, 'kubectl'), 'neighbour');
    const hostBefore = snapshotTree(join(host.root, 'host'));

    await host.rootfs().install('kube1', host.source);

    expect(listDir(bin)).toEqual(['.aks-flex-node.tmp-dir', '.other.tmp-0a1b2c', 'aks-flex-node', 'kubectl']);
    expect(snapshotTree(join(host.root, 'host'))).toEqual(hostBefore);
  });

  it('refuses a source that is not a regular file, and a missing source, with io', async () => {
    const rootfs = host.rootfs();
    expect(await containerErrorCode(rootfs.install('kube1', join(host.root, 'source')))).toBe('io');
    expect(await containerErrorCode(rootfs.install('kube1', join(host.root, 'no-such-file')))).toBe('io');
    expect(existsSync(join(host.machinesDir, 'kube1', 'usr'))).toBe(false);
  });

  it('never creates the machine directory itself', async () => {
    expect(await containerErrorCode(host.rootfs().install('kube2', host.source))).toBe('io');
    expect(existsSync(join(host.machinesDir, 'kube2'))).toBe(false);
  });

  it('refuses a non-directory component with io and changes nothing', async () => {
    mkdirSync(join(host.machinesDir, 'kube1', 'usr'));
    writeFileSync(join(host.machinesDir, 'kube1', 'usr', 'local'), 'a file where a directory belongs');
    const before = snapshotTree(host.root);

    expect(await containerErrorCode(host.rootfs().install('kube1', host.source))).toBe('io');
    expect(await containerErrorCode(host.rootfs().digest('kube1'))).toBe('io');

    expect(snapshotTree(host.root)).toEqual(before);
  });

  it('refuses a target that is not a regular file with io', async () => {
    mkdirSync(host.target, { recursive: true });
    const before = snapshotTree(host.root);

    expect(await containerErrorCode(host.rootfs().install('kube1', host.source))).toBe('io');
    expect(await containerErrorCode(host.rootfs().digest('kube1'))).toBe('io');

    expect(snapshotTree(host.root)).toEqual(before);
  });

  it.each(['../kube1', 'kube1/..', '', '.hidden', 'kube 1', 'kube3'])(
    'refuses machine %j with invalid-machine before touching the disk',
    async (machine) => {
      rmSync(host.machinesDir, { recursive: true }); // any disk access would now fail with io, not invalid-machine
      const rootfs = host.rootfs();
      expect(await containerErrorCode(rootfs.install(machine, host.source))).toBe('invalid-machine');
      expect(await containerErrorCode(rootfs.digest(machine))).toBe('invalid-machine');
      expect(existsSync(host.machinesDir)).toBe(false);
    },
  );
});

describe('NspawnContainerRootfs.digest', () => {
  it('is null when the copy, its directory, the machine or the machines directory is absent', async () => {
    const rootfs = host.rootfs();
    expect(await rootfs.digest('kube1')).toBeNull();
    expect(await rootfs.digest('kube2')).toBeNull();
    mkdirSync(join(host.machinesDir, 'kube1', 'usr/local/bin'), { recursive: true });
    expect(await rootfs.digest('kube1')).toBeNull();
    rmSync(host.machinesDir, { recursive: true });
    expect(await rootfs.digest('kube1')).toBeNull();
  });

  it('creates nothing', async () => {
    const before = snapshotTree(host.root);
    await host.rootfs().digest('kube1');
    expect(snapshotTree(host.root)).toEqual(before);
  });

  it('hashes a copy placed by someone else', async () => {
    mkdirSync(join(host.machinesDir, 'kube1', 'usr/local/bin'), { recursive: true });
    writeFileSync(host.target, 'placed by the image\n');
    expect(await host.rootfs().digest('kube1')).toEqual({ sha256: sha256Of(host.target), bytes: 20 });
  });

  it('refuses a copy over maxBytes with too-large', async () => {
    await host.rootfs().install('kube1', host.source);
    expect(await containerErrorCode(host.rootfs(4).digest('kube1'))).toBe('too-large');
  });
});

describe('NspawnContainerRootfs configuration', () => {
  const valid = {
    daemonStatePath: '/etc/state.json',
    machinesDir: '/var/lib/machines',
    machines: MACHINES,
    binaryPath: BINARY_PATH,
    maxBytes: 1,
  };

  it.each([
    { machinesDir: 'var/lib/machines' },
    { machinesDir: '/var/lib/../machines' },
    { daemonStatePath: 'state.json' },
    { binaryPath: '/' },
    { binaryPath: 'usr/bin/x' },
    { machines: ['kube1', '../etc'] },
    { maxBytes: -1 },
    { maxBytes: 1.5 },
  ])('rejects %j', (override) => {
    expect(() => new NspawnContainerRootfs({ ...valid, ...override })).toThrow(TypeError);
  });

  it('accepts a binary directly in the rootfs root', async () => {
    const rootfs = new NspawnContainerRootfs({
      ...valid,
      machinesDir: host.machinesDir,
      binaryPath: '/agent',
      maxBytes: 1024,
    });
    await rootfs.install('kube1', host.source);
    expect(readFileSync(join(host.machinesDir, 'kube1', 'agent'), 'utf8')).toBe('agent v2\n');
  });
});
