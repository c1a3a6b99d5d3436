import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../src/adapters/common/runtime/node-process-runner.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';

const BIN = join(import.meta.dirname, '../../bin/agent-upgrade');

/** Pids whose command line carries `marker`: the processes a run left behind. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(marker)) found.push(Number(name));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/** Waits (bounded) for no process to carry `marker`; returns the survivors, if any. */
async function survivorsOf(marker: string, boundMs = 3000): Promise<number[]> {
  const deadlineMs = Date.now() + boundMs;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0 || Date.now() >= deadlineMs) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function openPipes(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'PipeWrap').length;
}

/** Waits (bounded) for this process to hold no more pipes than `baseline`. */
async function pipesBackTo(baseline: number, boundMs = 2000): Promise<number> {
  const deadlineMs = Date.now() + boundMs;
  while (openPipes() > baseline && Date.now() < deadlineMs) await new Promise((resolve) => setTimeout(resolve, 20));
  return openPipes();
}

/**
 * A daemon that leaves the session (setsid), clears its environment (env -i) and keeps the
 * run's stdout open, named by `marker` so the test can find it whatever its parent became.
 */
const escapingDaemon = (marker: string): string => `setsid env -i sh -c 'while :; do sleep 1; done' ${marker} &`;

describe('the process tree of a run', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let marker: string;

  beforeEach(() => {
    scratch = makeScratch();
    marker = `MARKER-process-tree-${randomBytes(6).toString('hex')}`;
  });
  afterEach(() => {
    for (const pid of processesWith(marker)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    scratch.cleanup();
  });

  it('returns once the program exited, holds no pipe, and kills a setsid, env -i daemon holding stdout', async () => {
    const script = join(scratch.root, 'candidate');
    writeExecutable(script, `#!/bin/sh\n${escapingDaemon(marker)}\necho v2.0.0\n`);
    const baseline = openPipes();
    const started = Date.now();
    const outcome = await new NodeProcessRunner().run({
      command: script,
      args: ['version'],
      timeoutMs: 30_000,
      outputMaxBytes: 100,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0, stdout: 'v2.0.0\n' });
    expect(await survivorsOf(marker)).toEqual([]);
    expect(await pipesBackTo(baseline)).toBe(baseline);
  });

  it('times out at its bound when the program never exits, and kills it with its daemon', async () => {
    const script = join(scratch.root, 'candidate');
    writeExecutable(script, `#!/bin/sh\n${escapingDaemon(marker)}\necho v2.0.0\nwhile :; do sleep 1; done\n`);
    const baseline = openPipes();
    const started = Date.now();
    const outcome = await new NodeProcessRunner().run({
      command: script,
      args: ['version'],
      timeoutMs: 1000,
      outputMaxBytes: 100,
    });
    expect(outcome).toEqual({ kind: 'timed-out' });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await survivorsOf(marker)).toEqual([]);
    expect(await survivorsOf(script)).toEqual([]);
    expect(await pipesBackTo(baseline)).toBe(baseline);
  });

  it('without a cgroup, still kills a setsid, env -i descendant seen while the program ran', async () => {
    const script = join(scratch.root, 'candidate');
    writeExecutable(script, `#!/bin/sh\n${escapingDaemon(marker)}\necho v2.0.0\nsleep 0.5\n`);
    const baseline = openPipes();
    const outcome = await new NodeProcessRunner({ containment: 'process-tree' }).run({
      command: script,
      args: ['version'],
      timeoutMs: 5000,
      outputMaxBytes: 100,
    });
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
    expect(await survivorsOf(marker)).toEqual([]);
    expect(await pipesBackTo(baseline)).toBe(baseline);
  });

  it('reports a program still open for writing as spawn-failed ETXTBSY, not as a thrown error', async () => {
    const script = join(scratch.root, 'candidate');
    writeExecutable(script, '#!/bin/sh\necho v2.0.0\n');
    const writer = openSync(script, 'r+');
    try {
      expect(
        await new NodeProcessRunner().run({ command: script, args: ['version'], timeoutMs: 5000, outputMaxBytes: 100 }),
      ).toEqual({
        kind: 'spawn-failed',
        code: 'ETXTBSY',
      });
    } finally {
      closeSync(writer);
    }
  });

  it('lets the built CLI exit promptly after activating a candidate whose version leaves such a daemon', async () => {
    expect(existsSync(join(import.meta.dirname, '../../dist/app/main/main.js'))).toBe(true);
    const root = join(scratch.root, 'host');
    mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' }, agent: { allowScripts: true } }),
    );
    writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1.0.0\n');
    writeExecutable(join(scratch.root, 'candidate'), `#!/bin/sh\n${escapingDaemon(marker)}\necho v2.0.0\n`);
    const started = Date.now();
    const exit = await runBounded(BIN, ['activate', join(scratch.root, 'candidate'), '--root', root, '--json'], 20_000);
    expect(exit.code).toBe(0);
    expect(JSON.parse(exit.stdout)).toMatchObject({ ok: true, activation: { outcome: 'activated' } });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await survivorsOf(marker)).toEqual([]);
  }, 30_000);
});

/** Runs a program to its exit, killing it (code null) when it outlives `boundMs`. */
function runBounded(
  command: string,
  args: readonly string[],
  boundMs: number,
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8') });
    });
  });
}
