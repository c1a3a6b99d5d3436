import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { HostLock, LockAttempt, LockHolder, LockLease } from '../../ports/host-lock.js';

/** How long a `flock` child may take to report success or failure (I10). */
const ACQUIRE_TIMEOUT_MS = 10_000;
const BUSY_EXIT_CODE = 75;
const HOLDER_TEXT_MAX_BYTES = 4096;

/**
 * The host lock as a held `flock(1)` child (SPEC §6). The child takes an exclusive, non-blocking
 * flock on the lock file and then waits on its stdin, a pipe from this process: when this
 * process exits or dies for any reason the pipe closes, the child exits and the kernel releases
 * the lock, so a stale lock never blocks. Other tools using flock on the same path interoperate.
 * The holder writes who it is into the lock file; `holder()` trusts that text only while
 * /proc/locks shows an flock on the file's inode, so it never takes the lock to look.
 */
export class FlockHostLock implements HostLock {
  constructor(
    private readonly path: string,
    private readonly command: string,
    private readonly flockBinary = 'flock',
  ) {}

  async tryAcquire(): Promise<LockAttempt> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o750 });
    const handle = await open(this.path, 'a', 0o600);
    await handle.close();
    const { command, args } = flockCommand(this.path, this.flockBinary);
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const outcome = await waitForLock(child);
    if (outcome === 'busy') return { kind: 'busy', holder: await this.holder() };
    await this.writeHolder({ pid: process.pid, command: this.command, sinceMs: Date.now() });
    return { kind: 'acquired', lease: new FlockLease(child) };
  }

  async holder(): Promise<LockHolder | null> {
    let inode: number;
    try {
      inode = (await stat(this.path)).ino;
    } catch {
      return null;
    }
    const locks = await readFile('/proc/locks', 'utf8').catch(() => '');
    const held = locks.split('\n').some((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[1] === 'FLOCK' && fields[5]?.split(':')[2] === String(inode);
    });
    if (!held) return null;
    return (await this.readHolder()) ?? { pid: 0, command: 'unknown (another tool holds the flock)', sinceMs: 0 };
  }

  private async writeHolder(holder: LockHolder): Promise<void> {
    const handle = await open(this.path, 'r+');
    try {
      await handle.truncate(0);
      await handle.write(`${JSON.stringify(holder)}\n`, 0);
    } finally {
      await handle.close();
    }
  }

  private async readHolder(): Promise<LockHolder | null> {
    const text = (await readFile(this.path, 'utf8').catch(() => '')).slice(0, HOLDER_TEXT_MAX_BYTES);
    try {
      const value = JSON.parse(text) as Partial<LockHolder>;
      if (typeof value.pid === 'number' && typeof value.command === 'string' && typeof value.sinceMs === 'number') {
        return { pid: value.pid, command: value.command, sinceMs: value.sinceMs };
      }
    } catch {
      // A holder that is not this tool leaves no metadata; report it without details.
    }
    return null;
  }
}

/**
 * The held child: flock takes the lock without waiting, prints a line once it holds it, then
 * waits for end-of-file on stdin — which comes when the holder releases or dies.
 */
export function flockCommand(path: string, flockBinary = 'flock'): { readonly command: string; readonly args: readonly string[] } {
  return {
    command: flockBinary,
    args: ['--nonblock', '--exclusive', '--conflict-exit-code', String(BUSY_EXIT_CODE), path, 'sh', '-c', 'echo locked; exec cat >/dev/null'],
  };
}

class FlockLease implements LockLease {
  private released = false;

  constructor(private readonly child: ChildProcess) {}

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const exited = new Promise<void>((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) resolve();
      else this.child.once('exit', () => resolve());
    });
    this.child.stdin?.end();
    await exited;
  }
}

function waitForLock(child: ChildProcess): Promise<'acquired' | 'busy'> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('flock did not answer in time'));
    }, ACQUIRE_TIMEOUT_MS);
    child.stdout?.once('data', () => {
      clearTimeout(timer);
      resolve('acquired');
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === BUSY_EXIT_CODE) resolve('busy');
      else reject(new Error(`flock exited with status ${String(code)} before taking the lock`));
    });
  });
}
