import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (the kernel's pick; released just before the server binds it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

// Every child still running, so a test process that dies without teardown (a crash, an uncaught
// error, vitest killing the fork) does not leave etcd or an API server running on the machine.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A long-running child (etcd, kube-apiserver) with its output in a log file. */
export class ManagedProcess {
  private readonly exit: Promise<number | null>;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly logPath: string,
  ) {
    running.add(child);
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        resolve(signal === null ? code : null);
      });
      child.once('error', () => {
        running.delete(child);
        resolve(null);
      });
    });
  }

  static start(name: string, binary: string, args: readonly string[], logPath: string): ManagedProcess {
    const log = openSync(logPath, 'a');
    try {
      const child = spawn(binary, args, { stdio: ['ignore', log, log] });
      return new ManagedProcess(name, child, logPath);
    } finally {
      closeSync(log);
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True once the process has exited (its exit code, or null after a signal). */
  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null || !running.has(this.child);
  }

  /** The last `bytes` of its log, for error messages. */
  logTail(bytes = 4000): string {
    try {
      return readFileSync(this.logPath, 'utf8').slice(-bytes);
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([
      this.exit.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (gone) return;
    this.child.kill('SIGKILL');
    await this.exit;
  }
}
