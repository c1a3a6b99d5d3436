import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flockCommand, FlockHostLock } from '../../src/adapters/node/lock/flock-host-lock.js';
import { LockError } from '../../src/domain/common/port-errors.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { sandboxUpgrader } from '../support/sandbox-upgrader.js';

describe('FlockHostLock', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let lockPath: string;

  beforeEach(() => {
    scratch = makeScratch();
    lockPath = join(scratch.root, 'run/agent-upgrade.lock');
  });
  afterEach(() => scratch.cleanup());

  it('is exclusive, reports its holder, and is free again after release', async () => {
    const lock = new FlockHostLock(lockPath, 'test holder');
    const first = await lock.tryAcquire();
    expect(first.kind).toBe('acquired');

    const second = await new FlockHostLock(lockPath, 'second').tryAcquire();
    expect(second).toMatchObject({ kind: 'busy', holder: { kind: 'known', pid: process.pid, command: 'test holder' } });
    expect(await lock.holder()).toMatchObject({ kind: 'known', pid: process.pid });

    if (first.kind === 'acquired') {
      await first.lease.release();
      await first.lease.release();
    }
    expect(await lock.holder()).toBeNull();
    const third = await lock.tryAcquire();
    expect(third.kind).toBe('acquired');
    if (third.kind === 'acquired') await third.lease.release();
  });

  it('lets exactly one of 20 racing processes win, round after round', async () => {
    mkdirSync(dirname(lockPath), { recursive: true });
    // Each contender takes the lock the way the adapter does (its own descriptor of the file
    // handed to the flock child); a winner holds it until the test closes the contender's stdin,
    // which happens only after every contender has answered.
    const contender = [
      heldLikeTheAdapter(lockPath),
      "child.stdout.once('data', () => process.stdout.write('won'));",
      "child.once('exit', (code) => { if (code === 75) process.stdout.write('busy'); });",
      "process.stdin.on('data', () => {}).once('end', () => child.stdin.end());",
    ].join('\n');
    for (let round = 0; round < 3; round += 1) {
      const racers = Array.from({ length: 20 }, () =>
        spawn(process.execPath, ['-e', contender], { stdio: ['pipe', 'pipe', 'ignore'] }),
      );
      const answers = await Promise.all(
        racers.map(
          (racer) =>
            new Promise<string>((resolve) => racer.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()))),
        ),
      );
      const exited = racers.map((racer) => new Promise<void>((resolve) => racer.once('exit', () => resolve())));
      for (const racer of racers) racer.stdin.end();
      await Promise.all(exited);
      expect(answers.filter((answer) => answer === 'won')).toHaveLength(1);
      expect(answers.filter((answer) => answer === 'busy')).toHaveLength(19);
    }
  }, 60_000);

  it('is released by the kernel when the holding process is killed with SIGKILL', async () => {
    // A separate Node process holds the lock exactly as the adapter does (same flock command,
    // stdin a pipe from the holder), then dies without releasing.
    mkdirSync(dirname(lockPath), { recursive: true });
    const script = [
      heldLikeTheAdapter(lockPath),
      "child.stdout.once('data', () => process.stdout.write('ready'));",
      "child.once('exit', () => process.exit(1));",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    const lock = new FlockHostLock(lockPath, 'after the kill');
    try {
      await Promise.race([
        new Promise<void>((resolve) => holder.stdout.once('data', () => resolve())),
        exited.then(() => Promise.reject(new Error('the holder exited before taking the lock'))),
      ]);
      expect((await lock.tryAcquire()).kind).toBe('busy');
    } finally {
      holder.kill('SIGKILL');
    }
    await exited;
    await waitUntilFree(lock);

    const attempt = await lock.tryAcquire();
    expect(attempt.kind).toBe('acquired');
    if (attempt.kind === 'acquired') await attempt.lease.release();
  });
});

/** Node source that opens the lock file and spawns the adapter's flock child on it (at descriptor 3) as `child`. */
function heldLikeTheAdapter(lockPath: string): string {
  const { command, args } = flockCommand();
  return [
    "const { spawn } = require('node:child_process');",
    "const { openSync, constants: c } = require('node:fs');",
    `const fd = openSync(${JSON.stringify(lockPath)}, c.O_RDWR | c.O_CREAT | c.O_NOFOLLOW | c.O_NONBLOCK, 0o600);`,
    `const child = spawn(${JSON.stringify(command)}, ${JSON.stringify(args)}, { stdio: ['pipe', 'pipe', 'ignore', fd] });`,
  ].join('\n');
}

async function waitUntilFree(lock: FlockHostLock): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if ((await lock.holder()) === null) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('FlockHostLock when the lock cannot be tried', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => scratch.cleanup());

  it('reports an unusable lock path as LockError "unavailable", not as busy', async () => {
    writeFileSync(join(scratch.root, 'run'), 'not a directory');
    const lock = new FlockHostLock(join(scratch.root, 'run/agent.lock'), 'test');
    await expect(lock.tryAcquire()).rejects.toMatchObject({ constructor: LockError, code: 'unavailable' });
  });

  it('reports a missing flock(1) as LockError "unavailable"', async () => {
    const lock = new FlockHostLock(join(scratch.root, 'agent.lock'), 'test', {
      flockBinary: join(scratch.root, 'no-such-flock'),
    });
    await expect(lock.tryAcquire()).rejects.toMatchObject({ constructor: LockError, code: 'unavailable' });
  });

  it('turns into E_IO through a use case, with nothing changed', async () => {
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    writeFileSync(join(scratch.root, 'run'), 'not a directory');
    const before = snapshotTree(scratch.root, []);
    const result = await sandboxUpgrader(scratch.root).migrate();
    expect(result.ok ? null : result.failure.code).toBe('E_IO');
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });
});
