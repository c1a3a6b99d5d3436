// An embedder's own ServiceManager (docs/embedding.md#implementing-a-port): it runs the agent as a
// detached process group and keeps its PID in a file, as many small agents are run. Node runs
// this file as is (type stripping); `tsc` checks it against the package's declarations.
import { spawn } from 'node:child_process';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  HealthLimits,
  HealthVerdict,
  HealthWaitOptions,
  RestartObservation,
  ServiceActivity,
  ServiceManager,
} from 'agent-upgrade';

/** How long a stopping agent gets after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 2_000;

export class PidfileServiceManager implements ServiceManager {
  readonly name = 'pidfile';
  private readonly entry: string;
  private readonly pidfile: string;
  private starts = 0;

  /** `entry`: what starts the agent (the layout's entry link); `pidfile`: where its PID is kept. */
  constructor(options: { readonly entry: string; readonly pidfile: string }) {
    this.entry = options.entry;
    this.pidfile = options.pidfile;
  }

  /** Starts the agent once (the embedder's own boot); restarts go through `restart`. */
  start(): void {
    const child = spawn(this.entry, [], { detached: true, stdio: 'ignore' });
    child.unref();
    if (child.pid === undefined) throw new Error(`${this.entry} could not be started`);
    writeFileSync(this.pidfile, `${child.pid}\n`);
    this.starts += 1;
  }

  /** Stops the agent's whole process group, politely first. */
  async stop(): Promise<void> {
    const pid = this.pid();
    if (pid === null) return;
    signalGroup(pid, 'SIGTERM');
    for (let waitedMs = 0; alive(pid) && waitedMs < STOP_GRACE_MS; waitedMs += 50) await sleep(50);
    if (alive(pid)) signalGroup(pid, 'SIGKILL');
    rmSync(this.pidfile, { force: true });
  }

  // Nothing to install: no unit files, no recovery script (this manager has no on-failure hook).
  async convergeAssets(): Promise<{ readonly changed: boolean }> {
    return { changed: false };
  }
  async assetsCurrent(): Promise<boolean> {
    return true;
  }

  /** A PID file whose process is gone is an agent that died without being stopped: failed. */
  async activity(): Promise<ServiceActivity> {
    const pid = this.pid();
    if (pid === null) return 'inactive';
    return alive(pid) ? 'active' : 'failed';
  }

  async currentRun(): Promise<string | null> {
    const pid = this.pid();
    return pid === null ? null : `${pid}-${this.starts}`;
  }

  /** The contract: a stopped agent stays stopped; a running or failed one is (re)started. */
  async restart(): Promise<{ readonly restarted: boolean }> {
    if ((await this.activity()) === 'inactive') return { restarted: false };
    await this.stop();
    this.start();
    return { restarted: true };
  }

  async scheduleRestart(): Promise<void> {
    await this.restart();
  }

  /** This manager never restarts the agent on its own, so it has no count to give. */
  async restartCount(): Promise<RestartObservation> {
    return { restartEpoch: null, restarts: null };
  }

  /** The real path the agent runs: a script's path (its interpreter's first argument), else its executable. */
  async mainExecutable(): Promise<string | null> {
    const pid = this.pid();
    if (pid === null || !alive(pid)) return null;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = /\/(ba|da)?sh$/.test(argv[0] ?? '') ? argv[1] : undefined;
      return realpathSync(script ?? `/proc/${pid}/exe`);
    } catch {
      return null; // it exited between the two reads
    }
  }

  /** Healthy once `expectedPath` ran `stableMs` in a row; unhealthy as soon as it ran and then exited. */
  async waitHealthy(
    expectedPath: string,
    limits: HealthLimits,
    options: HealthWaitOptions = {},
  ): Promise<HealthVerdict> {
    let stableSinceMs: number | null = null;
    const startMs = Date.now();
    while (Date.now() - startMs < limits.timeoutMs && options.signal?.aborted !== true) {
      const running = await this.mainExecutable();
      if (running === null && stableSinceMs !== null) return { kind: 'unhealthy', reason: `${expectedPath} exited` };
      stableSinceMs = running === expectedPath ? (stableSinceMs ?? Date.now()) : null;
      const stableMs = stableSinceMs === null ? 0 : Date.now() - stableSinceMs;
      options.onPoll?.(stableMs);
      if (stableSinceMs !== null && stableMs >= limits.stableMs) return { kind: 'healthy' };
      await sleep(limits.pollMs);
    }
    if ((await this.mainExecutable()) === null) return { kind: 'not-running' };
    return { kind: 'unhealthy', reason: `${expectedPath} did not run for ${limits.stableMs} ms in a row` };
  }

  private pid(): number | null {
    try {
      const pid = Number(readFileSync(this.pidfile, 'utf8').trim());
      return Number.isSafeInteger(pid) && pid > 1 ? pid : null;
    } catch {
      return null;
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
