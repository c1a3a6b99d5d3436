import { execFileSync } from 'node:child_process';
import {
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlockHostLock } from '../../src/adapters/node/lock/flock-host-lock.js';
import { LOCK_PATH_FAULTS, MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { LockError } from '../../src/domain/common/port-errors.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { sandboxUpgrader } from '../support/sandbox-upgrader.js';

/** A refusal must come at once; the defect was an open that never returned (I10). */
const REFUSAL_TEST_TIMEOUT_MS = 5_000;
const UNUSABLE = { constructor: LockError, code: 'unavailable' };
const OUTSIDE_TEXT = 'a file outside the sandbox that the holder note must never touch\n';

describe('FlockHostLock refuses an unusable lock path with nothing changed', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let root: string;
  let outside: string;
  let lockPath: string;

  beforeEach(() => {
    scratch = makeScratch();
    root = join(scratch.root, 'root');
    outside = join(scratch.root, 'outside');
    mkdirSync(join(root, 'run'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim'), OUTSIDE_TEXT);
    lockPath = join(root, 'run/agent-upgrade.lock');
  });
  afterEach(() => scratch.cleanup());

  const lock = (): FlockHostLock => new FlockHostLock(lockPath, 'test', { root });

  it(
    'a FIFO at the lock path: refused at once by tryAcquire and holder, FIFO left alone',
    async () => {
      execFileSync('mkfifo', [lockPath]);
      await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
      await expect(lock().holder()).rejects.toMatchObject(UNUSABLE);
      expect(lstatSync(lockPath).isFIFO()).toBe(true);
    },
    REFUSAL_TEST_TIMEOUT_MS,
  );

  it('a symlink at the lock path to a file outside the root: refused, the file unchanged', async () => {
    symlinkSync(join(outside, 'victim'), lockPath);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    await expect(lock().holder()).rejects.toMatchObject(UNUSABLE);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe(OUTSIDE_TEXT);
    expect(lstatSync(lockPath).isSymbolicLink()).toBe(true);
  });

  it('a dangling symlink at the lock path: refused, nothing created where it points', async () => {
    symlinkSync(join(outside, 'created-through-the-link'), lockPath);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    expect(readdirSync(outside)).toEqual(['victim']);
  });

  it('a symlinked parent directory (run -> outside): refused, nothing written outside', async () => {
    const run = join(root, 'run');
    execFileSync('rmdir', [run]);
    symlinkSync(outside, run);
    writeFileSync(join(outside, 'agent-upgrade.lock'), OUTSIDE_TEXT);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    await expect(lock().holder()).rejects.toMatchObject(UNUSABLE);
    expect(readFileSync(join(outside, 'agent-upgrade.lock'), 'utf8')).toBe(OUTSIDE_TEXT);
    expect(readdirSync(outside).sort()).toEqual(['agent-upgrade.lock', 'victim']);
  });

  it('a symlinked parent whose lock file does not exist yet: refused, nothing created outside', async () => {
    const run = join(root, 'run');
    execFileSync('rmdir', [run]);
    symlinkSync(outside, run);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    expect(readdirSync(outside)).toEqual(['victim']);
  });

  it('a hard link to a file outside the root: refused, the file unchanged', async () => {
    linkSync(join(outside, 'victim'), lockPath);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe(OUTSIDE_TEXT);
  });

  it('a directory at the lock path: refused', async () => {
    mkdirSync(lockPath);
    await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
    expect(readdirSync(lockPath)).toEqual([]);
  });

  it.runIf(process.geteuid?.() === 0)(
    'a lock file owned by another user while running as root: refused, unchanged',
    async () => {
      writeFileSync(lockPath, OUTSIDE_TEXT);
      chownSync(lockPath, 65534, 65534);
      await expect(lock().tryAcquire()).rejects.toMatchObject(UNUSABLE);
      expect(readFileSync(lockPath, 'utf8')).toBe(OUTSIDE_TEXT);
    },
  );

  it("follows symlinks at or above the root, the operator's choice, and none below it", async () => {
    const linkedRoot = join(scratch.root, 'linked-root');
    symlinkSync(root, linkedRoot);
    const viaLink = new FlockHostLock(join(linkedRoot, 'run/agent-upgrade.lock'), 'test', { root: linkedRoot });
    const attempt = await viaLink.tryAcquire();
    expect(attempt.kind).toBe('acquired');
    if (attempt.kind === 'acquired') await attempt.lease.release();
    expect(lstatSync(lockPath).isFile()).toBe(true);
    // With the production root `/`, the same symlinked path is a symlink below the root.
    const strict = new FlockHostLock(join(linkedRoot, 'run/agent-upgrade.lock'), 'test');
    await expect(strict.tryAcquire()).rejects.toMatchObject(UNUSABLE);
  });
});

describe('an unusable lock path through a use case', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => scratch.cleanup());

  it(
    'a FIFO at the lock path makes migrate fail with E_IO at once, with nothing changed',
    async () => {
      writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
      mkdirSync(join(scratch.root, 'run'));
      execFileSync('mkfifo', [join(scratch.root, 'run/aks-flex-node-agent-upgrade.lock')]);
      const before = snapshotTree(scratch.root, []);
      const result = await sandboxUpgrader(scratch.root).migrate();
      expect(result.ok ? null : result.failure.code).toBe('E_IO');
      expect(snapshotTree(scratch.root, [])).toEqual(before);
    },
    REFUSAL_TEST_TIMEOUT_MS,
  );
});

describe('MemoryHostLock lock path faults', () => {
  it.each(LOCK_PATH_FAULTS)('%s: tryAcquire and holder throw LockError "unavailable" until cleared', async (fault) => {
    const lock = new MemoryHostLock();
    const held = await lock.tryAcquire();
    lock.setPathFault(fault);
    await expect(lock.tryAcquire()).rejects.toMatchObject(UNUSABLE);
    await expect(lock.holder()).rejects.toMatchObject(UNUSABLE);
    if (held.kind === 'acquired') await held.lease.release();
    lock.setPathFault(null);
    expect(await lock.holder()).toBeNull();
    expect((await lock.tryAcquire()).kind).toBe('acquired');
  });
});
