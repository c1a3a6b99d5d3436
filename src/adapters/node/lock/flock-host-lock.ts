import { spawn, type ChildProcess } from 'node:child_process';
import { LockError } from '../../../domain/common/port-errors.js';
import type { HostLock, LockAttempt, LockHolder, LockLease } from '../../../ports/node/host-lock.js';
import { kernelFlock, processStartTicks, type KernelFlock } from './kernel-locks.js';
import { errnoOf, openLockFile, type LockFile } from './lock-file.js';

/** How long a `flock` child may take to report success or failure (I10). */
const ACQUIRE_TIMEOUT_MS = 10_000;
/** How long a released `flock` child may take to exit before it is killed (I10). */
const RELEASE_TIMEOUT_MS = 5_000;
const BUSY_EXIT_CODE = 75;
const HOLDER_TEXT_MAX_BYTES = 4096;
/** The descriptor number at which the `flock` child inherits the checked lock file. */
export const LOCK_FD = 3;

export interface FlockHostLockOptions {
  /** Symlinks at or above this directory are followed, none below it. `/` in production. */
  readonly root?: string;
  readonly flockBinary?: string;
}

/** What a holder writes into the lock file; `lockPid` and `lockStartTicks` name its flock child. */
interface HolderNote {
  readonly pid: number;
  readonly command: string;
  readonly sinceMs: number;
  readonly lockPid: number;
  readonly lockStartTicks: string;
}

/**
 * The host lock as a held `flock(1)` child (docs/security.md#the-host). This process opens and
 * checks the lock file itself (lock-file.ts) and hands that descriptor to the child, which locks
 * the very inode through /proc/self/fd/3 — exclusive and non-blocking — and then waits on its
 * stdin, a pipe from this process: when this process exits or dies the pipe closes, the child
 * exits and the kernel releases the lock, so a stale lock never blocks. The child stays alive
 * (rather than locking the inherited descriptor and exiting) so that /proc/locks names a live
 * process. Other tools using flock on the same path interoperate. The holder note names the flock
 * child; `holder()` trusts the note only while /proc/locks shows that same child holding the
 * inode, and otherwise reports an unknown holder, so a note left by a dead holder is never
 * believed.
 */
export class FlockHostLock implements HostLock {
  private readonly root: string;
  private readonly flockBinary: string;

  constructor(
    private readonly path: string,
    private readonly command: string,
    options: FlockHostLockOptions = {},
  ) {
    this.root = options.root ?? '/';
    this.flockBinary = options.flockBinary ?? 'flock';
  }

  async tryAcquire(): Promise<LockAttempt> {
    const file = await openLockFile(this.root, this.path, true);
    if (file === null) throw new LockError('unavailable', `the host lock ${this.path} vanished while opening it`);
    try {
      const { command, args } = flockCommand(this.flockBinary);
      const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore', file.handle.fd] });
      const outcome = await waitForLock(child, this.path);
      if (outcome === 'busy') return { kind: 'busy', holder: await holderOf(file, true) };
      const lease = new FlockLease(child);
      try {
        await writeNote(file, {
          pid: process.pid,
          command: this.command,
          sinceMs: Date.now(),
          lockPid: child.pid ?? 0,
          lockStartTicks: await startTicksOf(child),
        });
      } catch (error) {
        await lease.release();
        throw new LockError(
          'unavailable',
          `the holder of the host lock ${this.path} cannot be recorded (${errnoOf(error)})`,
        );
      }
      return { kind: 'acquired', lease };
    } finally {
      await file.handle.close();
    }
  }

  async holder(): Promise<LockHolder | null> {
    const file = await openLockFile(this.root, this.path, false);
    if (file === null) return null;
    try {
      return await holderOf(file, false);
    } finally {
      await file.handle.close();
    }
  }
}

/**
 * The held child: flock locks the inherited, already checked descriptor's inode without waiting,
 * prints a line once it holds it, then waits for end-of-file on stdin — which comes when the
 * holder releases or dies. `--close` keeps the lock in the flock process alone, so the lock lives
 * exactly as long as the pid /proc/locks shows. Spawn it with the lock file at descriptor LOCK_FD.
 */
export function flockCommand(flockBinary = 'flock'): { readonly command: string; readonly args: readonly string[] } {
  return {
    command: flockBinary,
    args: [
      '--nonblock',
      '--exclusive',
      '--close',
      '--conflict-exit-code',
      String(BUSY_EXIT_CODE),
      `/proc/self/fd/${LOCK_FD}`,
      'sh',
      '-c',
      `exec ${LOCK_FD}<&-; echo locked; exec cat >/dev/null`,
    ],
  };
}

/**
 * Who holds the flock on the checked inode. `knownHeld` says the caller just saw it busy: then an
 * unreadable /proc/locks still means an unknown holder, while `holder()` cannot answer at all.
 */
async function holderOf(file: LockFile, knownHeld: boolean): Promise<LockHolder | null> {
  let kernel: KernelFlock;
  try {
    kernel = await kernelFlock(file.device, file.inode);
  } catch (error) {
    if (knownHeld) return { kind: 'unknown', pid: null };
    throw new LockError('unavailable', `/proc/locks cannot be read (${errnoOf(error)})`);
  }
  if (!kernel.held) return null;
  if (kernel.pid === null) return { kind: 'unknown', pid: null };
  const note = await readNote(file);
  const confirmed =
    note !== null && note.lockPid === kernel.pid && note.lockStartTicks === (await processStartTicks(kernel.pid));
  return confirmed
    ? { kind: 'known', pid: note.pid, command: note.command, sinceMs: note.sinceMs }
    : { kind: 'unknown', pid: kernel.pid };
}

async function startTicksOf(child: ChildProcess): Promise<string> {
  return (child.pid === undefined ? null : await processStartTicks(child.pid)) ?? '';
}

/** Written through the checked descriptor, never by path, so it cannot land anywhere else. */
async function writeNote(file: LockFile, note: HolderNote): Promise<void> {
  await file.handle.truncate(0);
  await file.handle.write(`${JSON.stringify(note)}\n`, 0);
}

async function readNote(file: LockFile): Promise<HolderNote | null> {
  const buffer = Buffer.alloc(HOLDER_TEXT_MAX_BYTES);
  const { bytesRead } = await file.handle.read(buffer, 0, buffer.length, 0).catch(() => ({ bytesRead: 0 }));
  try {
    const value = JSON.parse(buffer.subarray(0, bytesRead).toString('utf8')) as Partial<HolderNote>;
    const fields = [
      typeof value.pid,
      typeof value.command,
      typeof value.sinceMs,
      typeof value.lockPid,
      typeof value.lockStartTicks,
    ];
    if (fields.join() === 'number,string,number,number,string') return value as HolderNote;
  } catch {
    // A holder that is not this tool leaves no note, or not one of this shape.
  }
  return null;
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
    // Killing flock itself drops the lock, since --close left it in that process alone.
    const timer = setTimeout(() => this.child.kill('SIGKILL'), RELEASE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
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
      reject(new LockError('unavailable', `flock cannot be started for ${path} (${errnoOf(error)})`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === BUSY_EXIT_CODE) resolve('busy');
      else
        reject(new LockError('unavailable', `flock exited with status ${String(code)} before taking the lock ${path}`));
    });
  });
}
