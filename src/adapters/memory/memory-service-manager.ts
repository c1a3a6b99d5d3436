import type { Sha256 } from '../../domain/digest.js';
import { ServiceError } from '../../domain/port-errors.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { HealthVerdict, ServiceActivity, ServiceManager } from '../../ports/service-manager.js';

/** How a binary behaves when the service manager starts it, keyed by its digest. */
export type AgentBehaviour =
  /** Starts and keeps running. */
  | 'healthy'
  /** Exits at once on every start: the manager gives up after the start limit (failed). */
  | 'crash-on-start'
  /** Starts, then dies before the stability interval ends. */
  | 'crash-after-start'
  /** Starts but never reports ready: the start job times out (the process keeps running, unready). */
  | 'hang';

export interface MemoryServiceOptions {
  readonly fs: FileSystem;
  /** The link the unit's ExecStart names: resolved at every start, as systemd does. */
  readonly execStart: string;
  /**
   * What the unit runs while `execStart` does not exist: on a host not yet migrated the unit
   * still names the legacy binary, until migration rewrites it.
   */
  readonly legacyExecStart?: string;
  readonly behaviourOf: (digest: Sha256) => AgentBehaviour;
  readonly initialActivity?: ServiceActivity;
  readonly binaryMaxBytes?: number;
}

export interface StartRecord {
  readonly path: string;
  readonly digest: Sha256;
  readonly behaviour: AgentBehaviour;
}

/**
 * A model of the agent's unit for tests and simulations: which binary each start runs (ExecStart
 * resolved through the current link, at start time), what that binary does, and the unit's
 * state. Scheduled restarts wait until the test performs them, as a transient unit would run
 * them after the caller returned. Faults: `failNext(method)` makes the next call fail.
 */
export class MemoryServiceManager implements ServiceManager {
  readonly name = 'memory' as const;
  private state: ServiceActivity;
  private running: StartRecord | null = null;
  private converged = false;
  private scheduled = 0;
  /** The agent a SIGKILLed supervisor left running, until a new supervisor stops it. */
  private orphan: StartRecord | null = null;
  private readonly failures = new Set<string>();
  readonly starts: StartRecord[] = [];

  constructor(private readonly options: MemoryServiceOptions) {
    this.state = options.initialActivity ?? 'active';
  }

  /** Makes the next call of `method` throw a ServiceError (command-failed). */
  failNext(method: 'convergeAssets' | 'restart' | 'scheduleRestart' | 'waitHealthy'): void {
    this.failures.add(method);
  }

  /**
   * The supervisor dies by SIGKILL with its agent still running (no parent-death signal took
   * it along): the agent lives on as an orphan nobody manages. Until `startSupervisor`, activity
   * is `unknown` (the client cannot ask anyone), the main executable is the orphan's, and
   * restarts fail, as the supervisor's client reports it.
   */
  killSupervisor(): void {
    this.orphan = this.running;
    this.running = null;
  }

  /** A new supervisor stops the orphan it finds recorded, then starts the agent from current. */
  async startSupervisor(): Promise<void> {
    this.orphan = null;
    await this.start();
  }

  /** Agents running now, managed or not: never more than one. */
  get runningAgents(): number {
    return (this.running === null ? 0 : 1) + (this.orphan === null ? 0 : 1);
  }

  get scheduledRestarts(): number {
    return this.scheduled;
  }

  /** Runs the restarts a transient unit would run; returns how many ran. */
  async performScheduledRestarts(): Promise<number> {
    const count = this.scheduled;
    this.scheduled = 0;
    for (let index = 0; index < count; index += 1) await this.start();
    return count;
  }

  async convergeAssets(): Promise<{ readonly changed: boolean }> {
    this.maybeFail('convergeAssets');
    const changed = !this.converged;
    this.converged = true;
    return { changed };
  }

  async assetsCurrent(): Promise<boolean> {
    return this.converged;
  }

  async activity(): Promise<ServiceActivity> {
    return this.orphan === null ? this.state : 'unknown';
  }

  async restart(_options: { readonly resetFailed?: boolean } = {}): Promise<{ readonly restarted: boolean }> {
    this.maybeFail('restart');
    this.refuseWithoutSupervisor();
    // A failed unit restarts too: `systemctl restart` starts it again whether or not the
    // failure was reset first (`resetFailed` only clears the start-limit counter).
    if (this.state === 'inactive' || this.state === 'absent') return { restarted: false };
    await this.start();
    return { restarted: true };
  }

  async scheduleRestart(): Promise<void> {
    this.maybeFail('scheduleRestart');
    this.refuseWithoutSupervisor();
    this.scheduled += 1;
  }

  async mainExecutable(): Promise<string | null> {
    return (this.running ?? this.orphan)?.path ?? null;
  }

  async waitHealthy(expectedPath: string): Promise<HealthVerdict> {
    this.maybeFail('waitHealthy');
    const main = this.running ?? this.orphan;
    if (main === null) return { kind: 'not-running' };
    if (main.path !== expectedPath) return { kind: 'unhealthy', reason: `the agent runs ${main.path}` };
    if (this.running === null) return { kind: 'healthy' };
    if (this.running.behaviour === 'crash-after-start') {
      this.running = null;
      this.state = 'failed';
      return { kind: 'unhealthy', reason: 'the agent exited before it was stable' };
    }
    return { kind: 'healthy' };
  }

  private async start(): Promise<void> {
    const { fs, execStart, legacyExecStart } = this.options;
    const legacy = legacyExecStart !== undefined && (await fs.lstat(execStart)) === null;
    const resolution = await fs.resolve(legacy ? legacyExecStart : execStart);
    if (resolution.kind !== 'resolved' || resolution.stat.kind !== 'file') {
      this.running = null;
      this.state = 'failed';
      return;
    }
    const digest = (await this.options.fs.hashFile(resolution.path, this.options.binaryMaxBytes ?? 256 * 1024 * 1024))
      .sha256;
    const record: StartRecord = { path: resolution.path, digest, behaviour: this.options.behaviourOf(digest) };
    this.starts.push(record);
    if (record.behaviour === 'crash-on-start') {
      this.running = null;
      this.state = 'failed';
      return;
    }
    this.running = record;
    this.state = 'active';
    if (record.behaviour === 'hang') {
      this.state = 'failed';
      this.running = null;
      throw new ServiceError('timeout', 'the agent did not finish starting in time');
    }
  }

  private refuseWithoutSupervisor(): void {
    if (this.orphan !== null) throw new ServiceError('command-failed', 'no supervisor answers on the control socket');
  }

  private maybeFail(method: string): void {
    if (!this.failures.delete(method)) return;
    throw new ServiceError('command-failed', `${method} failed (injected)`);
  }
}
