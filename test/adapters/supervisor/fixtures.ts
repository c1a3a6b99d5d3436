import { createConnection } from 'node:net';
import { copyFileSync, chmodSync, existsSync, readFileSync, realpathSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { Supervisor, type SupervisorOptions } from '../../../src/adapters/node/supervisor/supervisor.js';
import { SupervisorServiceManager } from '../../../src/adapters/node/supervisor/supervisor-service-manager.js';
import { makeScratch, writeExecutable } from '../../support/real-tree.js';

/** Fast settings so a whole crash loop takes well under a second. */
export const FAST = {
  restartDelayMs: 100,
  startLimitBurst: 3,
  startLimitIntervalMs: 10_000,
  stopTimeoutMs: 1000,
} as const;

export const HEALTH = { timeoutMs: 5000, stableMs: 500, pollMs: 50 } as const;

/**
 * A host in a temp dir: two slots holding distinct copies of the real `sleep` binary (so
 * `/proc/<pid>/exe` names the slot), a `current` link, scripts, and the supervisors and PIDs to
 * clean up afterwards.
 */
export class Host {
  readonly root: string;
  readonly blue: string;
  readonly green: string;
  readonly current: string;
  readonly socket: string;
  private readonly scratch = makeScratch('sup-');
  private readonly supervisors: Supervisor[] = [];
  /** PIDs the test saw; every one must be gone at the end. */
  readonly seenPids = new Set<number>();

  constructor() {
    // realpath: /proc/<pid>/exe reports the resolved path even if the temp dir is a link.
    this.root = realpathSync(this.scratch.root);
    this.blue = join(this.root, 'blue');
    this.green = join(this.root, 'green');
    for (const slot of [this.blue, this.green]) {
      copyFileSync('/usr/bin/sleep', slot);
      chmodSync(slot, 0o755);
    }
    this.current = join(this.root, 'current');
    this.socket = join(this.root, 'run', 'supervisor.sock');
    this.point(this.blue);
  }

  /** Switches `current` atomically, as the upgrader does. */
  point(target: string): void {
    const next = `${this.current}.next`;
    symlinkSync(target, next);
    renameSync(next, this.current);
  }

  path(name: string): string {
    return join(this.root, name);
  }

  /** A `#!/bin/sh` script in the temp dir. */
  script(name: string, body: string): string {
    const path = this.path(name);
    writeExecutable(path, `#!/bin/sh\n${body}\n`);
    return path;
  }

  /** An agent that appends a line per start to `starts`, then runs `then`. */
  countingAgent(name: string, then: string): string {
    return this.script(name, `echo $$ >> ${this.path('starts')}\n${then}`);
  }

  starts(): number {
    return lines(this.path('starts'));
  }

  supervisor(overrides: Partial<SupervisorOptions> = {}): Supervisor {
    const supervisor = new Supervisor({
      execStart: this.current,
      args: ['1000'],
      controlSocket: this.socket,
      onFailure: null,
      ...FAST,
      ...overrides,
    });
    this.supervisors.push(supervisor);
    return supervisor;
  }

  manager(
    overrides: { readonly requestTimeoutMs?: number; readonly restartDelayMs?: number; readonly socket?: string } = {},
  ): SupervisorServiceManager {
    return new SupervisorServiceManager({
      controlSocket: overrides.socket ?? this.socket,
      clock: new SystemClock(),
      ...(overrides.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: overrides.requestTimeoutMs }),
      ...(overrides.restartDelayMs === undefined ? {} : { restartDelayMs: overrides.restartDelayMs }),
    });
  }

  /** The main PID now, remembered for the final no-stray-process check. */
  mainPid(supervisor: Supervisor): number | null {
    const pid = supervisor.status().mainPid;
    if (pid !== null) this.seenPids.add(pid);
    return pid;
  }

  /**
   * Closes every supervisor and returns the PIDs the test saw that still run (expected: none).
   * They are reported, not killed: a PID from an old line may belong to someone else by now.
   */
  async cleanup(): Promise<readonly number[]> {
    for (const supervisor of this.supervisors) {
      const pid = supervisor.status().mainPid;
      if (pid !== null) this.seenPids.add(pid);
      await supervisor.close();
    }
    const pidFiles = ['starts', 'pids'].map((name) => this.path(name)).filter((path) => existsSync(path));
    for (const file of pidFiles) for (const pid of numbers(file)) this.seenPids.add(pid);
    const alive: number[] = [];
    for (const pid of this.seenPids) if (!(await isGone(pid))) alive.push(pid);
    this.scratch.cleanup();
    return alive;
  }
}

export function lines(path: string): number {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '').length
    : 0;
}

export function numbers(path: string): number[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}

/** Polls `probe` every 20 ms until it returns true; false after `timeoutMs`. */
export async function eventually(probe: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A killed process is gone, or a zombie until whoever inherited it reaps it. */
export async function isGone(pid: number, waitMs = 1000): Promise<boolean> {
  return eventually(() => {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return true;
    }
    return state === 'Z' || state === 'X';
  }, waitMs);
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends raw bytes (then shuts down the sending side when `halfClose`) and returns everything it answers before closing. */
export function rawExchange(
  socketPath: string,
  bytes: string | null,
  timeoutMs = 3000,
  halfClose = false,
): Promise<{ readonly text: string; readonly closedByPeer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closedByPeer: false });
    }, timeoutMs);
    socket.once('connect', () => {
      if (bytes === null) return;
      if (halfClose) socket.end(bytes);
      else socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closedByPeer: true });
    });
  });
}
