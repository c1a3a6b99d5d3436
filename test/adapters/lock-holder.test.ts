import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlockHostLock } from '../../src/adapters/node/lock/flock-host-lock.js';
import { makeScratch } from '../support/real-tree.js';

/** How long another program may take to report that it holds the flock (I10). */
const OTHER_HOLDER_READY_MS = 5_000;

/**
 * Another program holding the flock by path, as `flock PATH COMMAND` does; it holds it until its
 * stdin is closed.
 */
async function otherProgramHolds(path: string): Promise<ChildProcessWithoutNullStreams> {
  const other = spawn('flock', ['--exclusive', path, 'sh', '-c', 'echo locked; exec cat >/dev/null']);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the other program did not take the lock')), OTHER_HOLDER_READY_MS);
    other.stdout.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return other;
}

async function stop(other: ChildProcessWithoutNullStreams): Promise<void> {
  if (other.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => other.once('exit', () => resolve()));
  other.stdin.end();
  await exited;
}

/** The pid of a process that has exited, as a long-dead holder's would be. */
function deadPid(): number {
  const pid = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim();
  return Number(pid);
}

describe('FlockHostLock names the holder from the kernel', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let lockPath: string;
  let other: ChildProcessWithoutNullStreams | null;

  beforeEach(() => {
    scratch = makeScratch();
    lockPath = join(scratch.root, 'run/agent-upgrade.lock');
    mkdirSync(dirname(lockPath), { recursive: true });
    other = null;
  });
  afterEach(async () => {
    if (other !== null) await stop(other);
    scratch.cleanup();
  });

  it("another program holds the flock over a stale note of a dead holder: unknown holder, the kernel's pid", async () => {
    const dead = deadPid();
    writeFileSync(lockPath, `${JSON.stringify({ pid: dead, command: 'agent-upgrade activate', sinceMs: 1 })}\n`);
    other = await otherProgramHolds(lockPath);
    const lock = new FlockHostLock(lockPath, 'test');
    expect(await lock.tryAcquire()).toEqual({ kind: 'busy', holder: { kind: 'unknown', pid: other.pid } });
    expect(await lock.holder()).toEqual({ kind: 'unknown', pid: other.pid });
  });

  it('another program holds the flock after this adapter released it: its note is not believed', async () => {
    const lock = new FlockHostLock(lockPath, 'earlier holder');
    const first = await lock.tryAcquire();
    expect(first.kind).toBe('acquired');
    if (first.kind === 'acquired') await first.lease.release();
    other = await otherProgramHolds(lockPath);
    expect(await lock.holder()).toEqual({ kind: 'unknown', pid: other.pid });
  });

  it('a note naming the holding pid but another process start (a recycled pid): unknown holder', async () => {
    other = await otherProgramHolds(lockPath);
    const forged = {
      pid: deadPid(),
      command: 'agent-upgrade activate',
      sinceMs: 1,
      lockPid: other.pid,
      lockStartTicks: '1',
    };
    writeFileSync(lockPath, `${JSON.stringify(forged)}\n`);
    expect(await new FlockHostLock(lockPath, 'test').holder()).toEqual({ kind: 'unknown', pid: other.pid });
  });

  it('this adapter holding it: the note is confirmed and names this process', async () => {
    const lock = new FlockHostLock(lockPath, 'confirmed holder');
    const held = await lock.tryAcquire();
    try {
      expect(await new FlockHostLock(lockPath, 'reader').holder()).toMatchObject({
        kind: 'known',
        pid: process.pid,
        command: 'confirmed holder',
      });
    } finally {
      if (held.kind === 'acquired') await held.lease.release();
    }
    expect(await lock.holder()).toBeNull();
  });
});
