import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../support/real-tree.js';
import { containerErrorCode, makeNspawnScratch, type NspawnScratch } from './nspawn-fixture.js';

/*
 * A rootfs belongs to the container: a planted symlink must never make install write (or digest
 * read) outside it. Each case asserts the refusal code, that the host side is byte-identical
 * with nothing new created, and that the planted link itself is left as it was.
 */

let host: NspawnScratch;
let kube1: string;

beforeEach(() => {
  host = makeNspawnScratch();
  kube1 = join(host.machinesDir, 'kube1');
});

afterEach(() => {
  host.cleanup();
});

/** Runs install and digest, expecting both refused, and the whole scratch host unchanged. */
async function expectRefusedAndUntouched(code: 'symlink-refused' | 'io' = 'symlink-refused'): Promise<void> {
  const before = snapshotTree(host.root);
  const rootfs = host.rootfs();
  expect(await containerErrorCode(rootfs.install('kube1', host.source))).toBe(code);
  expect(await containerErrorCode(rootfs.digest('kube1'))).toBe(code);
  expect(snapshotTree(host.root)).toEqual(before);
}

describe('NspawnContainerRootfs never follows a symlink inside the rootfs', () => {
  it('refuses a machine directory that is a symlink', async () => {
    const elsewhere = join(host.root, 'elsewhere');
    mkdirSync(join(elsewhere, 'usr/local/bin'), { recursive: true });
    writeFileSync(join(elsewhere, 'usr/local/bin/aks-flex-node'), 'elsewhere\n');
    symlinkSync(elsewhere, join(host.machinesDir, 'kube2'));

    const before = snapshotTree(host.root);
    const rootfs = host.rootfs();
    expect(await containerErrorCode(rootfs.install('kube2', host.source))).toBe('symlink-refused');
    expect(await containerErrorCode(rootfs.digest('kube2'))).toBe('symlink-refused');
    expect(snapshotTree(host.root)).toEqual(before);
  });

  it('refuses usr as a symlink to the host /usr', async () => {
    symlinkSync(join(host.root, 'host', 'usr'), join(kube1, 'usr'));
    await expectRefusedAndUntouched();
  });

  it('refuses usr/local/bin as a symlink to a host directory, leaving the host binary byte-identical', async () => {
    mkdirSync(join(kube1, 'usr/local'), { recursive: true });
    symlinkSync(host.hostBinDir, join(kube1, 'usr/local/bin'));
    const hostBefore = snapshotTree(join(host.root, 'host'));

    await expectRefusedAndUntouched();

    expect(snapshotTree(join(host.root, 'host'))).toEqual(hostBefore);
    expect(readlinkSync(join(kube1, 'usr/local/bin'))).toBe(host.hostBinDir);
  });

  it('refuses a relative symlink that climbs out of the rootfs', async () => {
    mkdirSync(join(kube1, 'usr/local'), { recursive: true });
    symlinkSync('../../../../host/usr/local/bin', join(kube1, 'usr/local/bin'));
    await expectRefusedAndUntouched();
  });

  it('refuses a target that is a symlink to a host file, leaving both as they were', async () => {
    mkdirSync(join(kube1, 'usr/local/bin'), { recursive: true });
    symlinkSync(host.hostBinary, host.target);

    await expectRefusedAndUntouched();

    expect(lstatSync(host.target).isSymbolicLink()).toBe(true);
  });

  it('refuses a dangling symlink target without creating what it points at', async () => {
    mkdirSync(join(kube1, 'usr/local/bin'), { recursive: true });
    const nowhere = join(host.root, 'host', 'created-through-the-link');
    symlinkSync(nowhere, host.target);

    await expectRefusedAndUntouched();

    expect(existsSync(nowhere)).toBe(false);
  });

  it('refuses a symlink to a directory that would be created on the way (dangling parent link)', async () => {
    mkdirSync(join(kube1, 'usr'), { recursive: true });
    const nowhere = join(host.root, 'host', 'new-local');
    symlinkSync(nowhere, join(kube1, 'usr/local'));

    await expectRefusedAndUntouched();

    expect(existsSync(nowhere)).toBe(false);
  });

  it('refuses a symlink loop', async () => {
    mkdirSync(join(kube1, 'usr/local'), { recursive: true });
    symlinkSync('bin', join(kube1, 'usr/local/bin'));
    await expectRefusedAndUntouched();
  });
});

describe('NspawnContainerRootfs descriptors', () => {
  it('closes every descriptor it opens, on success and on every refusal', async () => {
    const rootfs = host.rootfs(64);
    const openDescriptors = (): number => readdirSync('/proc/self/fd').length;
    const before = openDescriptors();

    await rootfs.install('kube1', host.source);
    await rootfs.digest('kube1');
    await rootfs.digest('kube2');
    writeFileSync(host.source, 'z'.repeat(65));
    await containerErrorCode(rootfs.install('kube1', host.source));
    await containerErrorCode(host.rootfs(4).digest('kube1'));
    symlinkSync(host.hostBinary, join(kube1, 'usr/local/bin/.aks-flex-node.tmp-x'));
    renameSync(join(kube1, 'usr/local/bin'), join(kube1, 'usr/local/bin-real'));
    symlinkSync(host.hostBinDir, join(kube1, 'usr/local/bin'));
    await containerErrorCode(rootfs.install('kube1', host.source));
    await containerErrorCode(rootfs.digest('kube1'));
    await containerErrorCode(rootfs.install('kube1', join(host.root, 'source')));

    expect(openDescriptors()).toBe(before);
  });
});
