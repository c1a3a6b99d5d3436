import { spawn, type ChildProcess } from 'node:child_process';
import { LockError } from '../../domain/port-errors.js';
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
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o750 });
      const handle = await open(this.path, 'a', 0o600);
      await handle.close();
    } catch (error) {
      throw new LockError('unavailable', `the host lock ${this.path} cannot be opened (${errorCode(error)})`);
    }
    const { command, args } = flockCommand(this.path, this.flockBinary);
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const outcome = await waitForLock(child, this.path);
    if (outcome === 'busy') return { kind: 'busy', holder: await this.holder() };
    const lease = new FlockLease(child);
    try {
      await this.writeHolder({ pid: process.pid, command: this.command, sinceMs: Date.now() });
    } catch (error) {
      await lease.release();
      throw new LockError('unavailable', `the holder of the host lock ${this.path} cannot be recorded (${errorCode(error)})`);
    }
    return { kind: 'acquired', lease };
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

function waitForLock(child: ChildProcess, path: string): Promise<'acquired' | 'busy'> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new LockError('timeout', `flock did not answer within ${ACQUIRE_TIMEOUT_MS} ms for ${path}`));
    }, ACQUIRE_TIMEOUT_MS);
    child.stdout?.once('data', () => {
      clearTimeout(timer);
      resolve('acquired');
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      // flock(1) itself is missing or cannot run (util-linux not installed).
      reject(new LockError('unavailable', `flock cannot be started for ${path} (${errorCode(error)})`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === BUSY_EXIT_CODE) resolve('busy');
      else reject(new LockError('unavailable', `flock exited with status ${String(code)} before taking the lock ${path}`));
    });
  });
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'error';
}
