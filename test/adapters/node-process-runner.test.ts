import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../src/adapters/common/runtime/node-process-runner.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';

describe('NodeProcessRunner', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const runner = new NodeProcessRunner();
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => scratch.cleanup());

  it('reports the exit code and output of a program', async () => {
    const outcome = await runner.run({
      command: 'sh',
      args: ['-c', 'echo out; echo err >&2; exit 3'],
      timeoutMs: 5000,
      outputMaxBytes: 100,
    });
    expect(outcome).toEqual({ kind: 'exited', exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('cuts output at the bound', async () => {
    const outcome = await runner.run({
      command: 'sh',
      args: ['-c', 'head -c 100000 /dev/zero | tr "\\0" x'],
      timeoutMs: 5000,
      outputMaxBytes: 10,
    });
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'xxxxxxxxxx' });
  });

  it('kills the whole process group on timeout', async () => {
    const script = join(scratch.root, 'hang.sh');
    const pidFile = join(scratch.root, 'child.pid');
    writeExecutable(script, `#!/bin/sh\nsleep 30 &\necho $! > ${pidFile}\nwait\n`);
    const started = Date.now();
    const outcome = await runner.run({ command: script, args: [], timeoutMs: 300, outputMaxBytes: 100 });
    expect(outcome).toEqual({ kind: 'timed-out' });
    expect(Date.now() - started).toBeLessThan(5000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await isGoneOrZombie(pid)).toBe(true);
  });

  it('returns promptly when a forked daemon keeps the output pipes open', async () => {
    const started = Date.now();
    const outcome = await runner.run({
      command: 'sh',
      args: ['-c', 'echo v1.2.3; (sleep 30 &) ; exit 0'],
      timeoutMs: 5000,
      outputMaxBytes: 100,
    });
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reports a program that cannot be started', async () => {
    const outcome = await runner.run({
      command: join(scratch.root, 'missing'),
      args: [],
      timeoutMs: 1000,
      outputMaxBytes: 10,
    });
    expect(outcome).toEqual({ kind: 'spawn-failed', code: 'ENOENT' });
  });
});

/** A killed process is gone, or a zombie until whoever inherited it reaps it. */
async function isGoneOrZombie(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return true;
    }
    if (state === 'Z' || state === 'X') return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
