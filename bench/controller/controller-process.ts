/**
 * `agent-upgrade controller` as installed (bin/agent-upgrade, shebang and V8 flags included), a
 * process of its own: its metrics port from its start-up log line, its readiness, its memory and
 * CPU time from /proc, its /metrics text, and a bounded stop (SIGTERM, SIGKILL after a while).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LEASE_NAMESPACE, waitUntil } from './bench-world.js';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(REPO, 'bin', 'agent-upgrade');
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

export interface Memory {
  /** VmRSS, KiB. */
  readonly rssKiB: number;
  /** VmHWM (the peak resident set so far), KiB. */
  readonly peakKiB: number;
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssKiB: field('VmRSS'), peakKiB: field('VmHWM') };
}

/** User plus system CPU time of `pid` so far, ms. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is parenthesised and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

export class ControllerProcess {
  private stderr = '';
  private exited: Promise<{ code: number | null; signal: string | null }>;

  private constructor(
    private readonly child: ChildProcess,
    readonly metricsPort: number,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null) resolve({ code: child.exitCode, signal: null });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  static async start(kubeconfig: string, identity: string, timeoutMs = 30_000): Promise<ControllerProcess> {
    const child = spawn(
      CLI,
      [
        'controller',
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        LEASE_NAMESPACE,
        '--identity',
        identity,
        '--metrics-address',
        '127.0.0.1:0',
        '--log-level',
        'info',
        // Unpaced: the bench measures what the controller costs, not the client-side rate limit
        // (bench/pacing measures that).
        '--kube-api-qps',
        '0',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    let port: number | null = null;
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-50_000);
      if (port === null) port = metricsPortIn(stderr);
    });
    try {
      await waitUntil(() => port !== null || child.exitCode !== null, timeoutMs, 'the controller to log its start');
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    if (port === null) throw new Error(`the controller exited at start (${child.exitCode}): ${stderr}`);
    const started = new ControllerProcess(child, port);
    started.stderr = stderr;
    child.stderr?.on('data', (chunk: Buffer) => {
      started.stderr = (started.stderr + chunk.toString('utf8')).slice(-50_000);
    });
    return started;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get logTail(): string {
    return this.stderr.slice(-4_000);
  }

  memory(): Memory {
    return memoryOf(this.pid);
  }

  cpuMs(): number {
    return cpuMsOf(this.pid);
  }

  async get(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`, {
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, text: await response.text() };
  }

  /** Until /readyz answers 200: leading, with every cache filled. */
  async ready(timeoutMs: number): Promise<void> {
    let ready = false;
    const deadline = performance.now() + timeoutMs;
    while (!ready) {
      if (this.child.exitCode !== null)
        throw new Error(`the controller exited (${this.child.exitCode}): ${this.logTail}`);
      if (performance.now() > deadline) throw new Error(`the controller was not ready within ${timeoutMs} ms`);
      ready = (await this.get('/readyz').catch(() => ({ status: 0 }))).status === 200;
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async metrics(): Promise<string> {
    const answer = await this.get('/metrics');
    if (answer.status !== 200) throw new Error(`/metrics answered ${answer.status}`);
    return answer.text;
  }

  /** SIGTERM, SIGKILL after `timeoutMs`; how it ended. */
  async stop(timeoutMs = 15_000): Promise<{ code: number | null; signal: string | null; afterMs: number }> {
    const startedMs = performance.now();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const ended = await this.exited;
    clearTimeout(timer);
    return { ...ended, afterMs: performance.now() - startedMs };
  }
}

/** The port of `"metrics":{"host":…,"port":N}` in the JSON line "The rollout controller started.". */
function metricsPortIn(stderr: string): number | null {
  for (const line of stderr.split('\n')) {
    if (!line.includes('The rollout controller started.')) continue;
    try {
      const port = (JSON.parse(line) as { metrics?: { port?: unknown } }).metrics?.port;
      if (typeof port === 'number') return port;
    } catch {
      // a line cut in two by the pipe: the next chunk completes it
    }
  }
  return null;
}
