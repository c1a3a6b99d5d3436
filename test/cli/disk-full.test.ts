import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseArchive, sha256Hex } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const MEMBER = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
const CONFIG = { service: { manager: 'none' }, container: { manager: 'none' }, agent: { allowScripts: true } };

/** Every `.tmp-` entry below `directory`: what an interrupted or failed write leaves behind. */
function tempsBelow(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((path) => path.includes('.tmp-'));
}

/** Unmounts `directory`; lazily when it is still busy; nothing when it is not mounted. */
function unmount(directory: string): void {
  for (const args of [[directory], ['-l', directory]]) {
    try {
      execFileSync('umount', args, { stdio: 'ignore' });
      return;
    } catch {
      // Not mounted (the mount itself failed), or still busy: then detach it lazily.
    }
  }
}

function freeBytes(directory: string): number {
  const stats = statfsSync(directory);
  return stats.bavail * stats.bsize;
}

/** A script candidate that reports `version` and is padded to `bytes` (incompressible, so the archive is as big). */
function scriptOfSize(version: string, bytes: number): Buffer {
  const head = Buffer.from(`#!/bin/sh\necho ${version}\nexit 0\n# `);
  return Buffer.concat([
    head,
    Buffer.from(
      randomBytes(bytes)
        .toString('base64')
        .slice(0, bytes - head.length - 1),
    ),
    Buffer.from('\n'),
  ]);
}

/**
 * Real ENOSPC: every test gets its own small tmpfs (root only, as in CI), a `--root` sandbox on
 * it, and a loopback release server. Unmounted and removed after each test.
 */
describe('a full disk', () => {
  let mountPoint: string;
  let server: HostileServer;

  const mountTmpfs = (size: string): void => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', mountPoint]);
  };
  const sandbox = (): string => {
    const root = join(mountPoint, 'host');
    mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(join(root, 'etc/aks-flex-node/agent-upgrade.json'), JSON.stringify(CONFIG));
    writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1.0.0\n');
    return root;
  };
  const publish = (content: Uint8Array): { url: string; sha256: string } => {
    const archive = releaseArchive(MEMBER, content);
    server.route('/release.tar.gz', serve(archive));
    return { url: server.url('/release.tar.gz'), sha256: sha256Hex(archive) };
  };

  beforeEach(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'agent-upgrade-disk-'));
    server = await startHostileServer();
  });
  afterEach(async () => {
    await server.close();
    unmount(mountPoint);
    rmSync(mountPoint, { recursive: true, force: true });
  }, 10_000);

  it('fetch fails with E_DISK_SPACE (exit 1) and leaves neither the output nor a temp file', async () => {
    mountTmpfs('512k');
    const release = publish(randomBytes(1024 * 1024));
    const run = await runCliInMemory([
      'fetch',
      '--url',
      release.url,
      '--sha256',
      release.sha256,
      '--output',
      join(mountPoint, 'agent'),
      '--json',
    ]);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_DISK_SPACE' } });
    expect(readdirSync(mountPoint)).toEqual([]);
  });

  it('install fails with E_DISK_SPACE (exit 1), the slots and links unchanged and no temp file left', async () => {
    mountTmpfs('512k');
    const root = sandbox();
    expect((await runCliInMemory(['migrate', '--root', root, '--json'])).exitCode).toBe(0);
    const before = snapshotTree(root);
    const release = publish(randomBytes(1024 * 1024));
    const run = await runCliInMemory([
      'install',
      '--url',
      release.url,
      '--sha256',
      release.sha256,
      '--root',
      root,
      '--json',
    ]);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_DISK_SPACE' } });
    expect(snapshotTree(root)).toEqual(before);
    expect(tempsBelow(root)).toEqual([]);
  });

  it.each([
    ['a migrated host', true],
    ['a legacy host', false],
  ])(
    'install of a binary of 60%% of the free space succeeds on %s: the download is moved into the slot, not copied',
    async (_name, migrated) => {
      mountTmpfs('2m');
      const root = sandbox();
      if (migrated) expect((await runCliInMemory(['migrate', '--root', root, '--json'])).exitCode).toBe(0);
      const candidate = scriptOfSize('v2.0.0', Math.floor(freeBytes(mountPoint) * 0.6));
      const release = publish(candidate);
      const run = await runCliInMemory([
        'install',
        '--url',
        release.url,
        '--sha256',
        release.sha256,
        '--root',
        root,
        '--json',
      ]);
      expect(run.exitCode).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        ok: true,
        activation: { outcome: 'activated', to: 'green', candidateSha256: sha256Hex(candidate) },
      });
      expect(readlinkSync(join(root, 'usr/local/lib/aks-flex-node/aks-flex-node-current'))).toBe('aks-flex-node-green');
      expect(sha256Hex(readFileSync(join(root, 'usr/local/lib/aks-flex-node/aks-flex-node-green')))).toBe(
        sha256Hex(candidate),
      );
      expect(tempsBelow(root)).toEqual([]);
    },
  );

  it('activate of a binary of 60% of the free space succeeds: the snapshot is moved into the slot, not copied', async () => {
    mountTmpfs('2m');
    const root = sandbox();
    expect((await runCliInMemory(['migrate', '--root', root, '--json'])).exitCode).toBe(0);
    const candidate = scriptOfSize('v2.0.0', Math.floor(freeBytes(mountPoint) * 0.6));
    // The candidate itself lies outside the small filesystem, as a file an operator staged.
    const outside = mkdtempSync(join(tmpdir(), 'agent-upgrade-candidate-'));
    try {
      writeExecutable(join(outside, 'candidate'), candidate.toString('latin1'));
      const run = await runCliInMemory(['activate', join(outside, 'candidate'), '--root', root, '--json']);
      expect(run.exitCode).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, activation: { outcome: 'activated', to: 'green' } });
      expect(sha256Hex(readFileSync(join(root, 'usr/local/lib/aks-flex-node/aks-flex-node-green')))).toBe(
        sha256Hex(candidate),
      );
      expect(tempsBelow(root)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

/**
 * A full `/etc/aks-flex-node` (where the marker, the state and the record live): the activation
 * refuses before the switch, because the marker that makes it recoverable cannot be written —
 * exit 1 is then the truth, and the slots and links are as they were.
 */
describe('a full state directory', () => {
  let root: string;
  const etc = () => join(root, 'etc/aks-flex-node');

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'agent-upgrade-etc-full-'));
    mkdirSync(etc(), { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', etc()]);
    writeFileSync(join(etc(), 'agent-upgrade.json'), JSON.stringify(CONFIG));
    writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1.0.0\n');
  });
  afterEach(() => {
    unmount(etc());
    rmSync(root, { recursive: true, force: true });
  }, 10_000);

  it('activate: E_DISK_SPACE, exit 1, nothing switched or installed', async () => {
    expect((await runCliInMemory(['migrate', '--root', root, '--json'])).exitCode).toBe(0);
    writeExecutable(join(root, 'staging/candidate'), '#!/bin/sh\necho v2.0.0\n');
    // Fill what is left of the state directory.
    try {
      writeFileSync(join(etc(), 'filler'), Buffer.alloc(128 * 1024));
    } catch {
      // ENOSPC once it is full: what was written stays.
    }
    const before = snapshotTree(root, ['/run', '/etc']);
    const run = await runCliInMemory(['activate', join(root, 'staging/candidate'), '--root', root, '--json']);
    expect({
      exitCode: run.exitCode,
      error: (JSON.parse(run.stdout) as { error?: { code: string; hostChanged?: boolean } }).error,
    }).toMatchObject({
      exitCode: 1,
      error: { code: 'E_DISK_SPACE' },
    });
    expect(snapshotTree(root, ['/run', '/etc'])).toEqual(before);
    expect(readlinkSync(join(root, 'usr/local/lib/aks-flex-node/aks-flex-node-current'))).toBe('aks-flex-node-blue');
  });
});
