import type { Sha256 } from '../../../domain/common/digest.js';
import { ServiceError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type {
  HealthLimits,
  HealthVerdict,
  HealthWaitOptions,
  RestartObservation,
  ServiceActivity,
  ServiceManager,
} from '../../../ports/node/service-manager.js';
import { waitForStableExecutable, type MainProcessObservation } from '../service/stable-executable.js';
import { MemoryClock } from '../../common/memory/memory-clock.js';

/** How a binary behaves when the service manager starts it, keyed by its digest. */
export type AgentBehaviour =
  /** Starts and keeps running. */
  | 'healthy'
  /** Exits at once on every start: the manager gives up after the start limit (failed). */
  | 'crash-on-start'
  /** Starts, then dies as soon as any time passed: before any stability interval ends (failed). */
  | 'crash-after-start'
  /** Starts, runs for one second (shorter than any stability interval the sims use), then dies (failed). */
  | 'crash-after-1s'
  /** Starts, runs for twenty seconds — past the health gate, inside a watch window — then dies (failed). */
  | 'crash-after-20s'
  /** Starts but never reports ready: the start job times out (the process keeps running, unready). */
  | 'hang'
  /** Starts and keeps running, but its health endpoint answers 503 (MemoryHealthProbe). */
  | 'probe-fails';

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
  /**
   * The health wait's time, and the crash-after-start agent's. Default: a memory clock of its
   * own, so that a wait costs neither real time nor time on the caller's clock.
   */
  readonly clock?: Clock;
}

/**
 * The limits of a `waitHealthy` called without any (the port always passes them): a caller
 * that only wants the model's verdict, e.g. to let a crash-after-start agent die.
 */
const CRASH_AFTER_MS = 1_000;
const LATE_CRASH_AFTER_MS = 20_000;
/**
 * The automatic restarts a crash loop gets before the manager gives up (systemd's
 * StartLimitBurst=3 starts, so NRestarts=2): the model jumps straight to the end of the loop.
 */
const RESTARTS_BEFORE_GIVING_UP = 2;

/** Each model instance is one boot's service manager: its count lives as long as it does. */
let modelInstances = 0;

export const MODEL_HEALTH_LIMITS: HealthLimits = { timeoutMs: 30_000, stableMs: 3_000, pollMs: 250 };

export interface StartRecord {
  readonly path: string;
  readonly digest: Sha256;
  readonly behaviour: AgentBehaviour;
}

/** The agent's main process: what it runs, its PID (one per start) and when it started. */
interface MainProcess {
  readonly start: StartRecord;
  readonly pid: number;
  readonly sinceMs: number;
}

/**
 * A model of the agent's unit for tests and simulations: which binary each start runs (ExecStart
 * resolved through the current link, at start time), what that binary does, and the unit's
 * state. Scheduled restarts wait until the test performs them, as a transient unit would run
 * them after the caller returned. Health is judged by the rule the real adapters share
 * (stable-executable.ts) on the main process the model shows at each poll; a unit that failed
 * is one the manager gave up on. Faults: `failNext(method)` makes the next call fail.
 */
export class MemoryServiceManager implements ServiceManager {
  readonly name = 'memory' as const;
  private state: ServiceActivity;
  private running: MainProcess | null = null;
  private converged = false;
  private scheduled = 0;
  /** The agent a SIGKILLed supervisor left running, until a new supervisor stops it. */
  private orphan: MainProcess | null = null;
  private readonly failures = new Set<string>();
  private readonly clock: Clock;
  readonly starts: StartRecord[] = [];
  /** Automatic restarts, as systemd's NRestarts: a model instance is one boot's manager. */
  private restarts = 0;
  private readonly epoch = `memory-${(modelInstances += 1)}`;

  constructor(private readonly options: MemoryServiceOptions) {
    this.state = options.initialActivity ?? 'active';
    this.clock = options.clock ?? new MemoryClock();
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
    this.orphan = this.settle();
    this.running = null;
  }

  /** A new supervisor stops the orphan it finds recorded, then starts the agent from current. */
  async startSupervisor(): Promise<void> {
    this.orphan = null;
    await this.start();
  }

  /**
   * The agent crashes and the manager restarts it on its own (Restart=on-failure), counted as
   * systemd counts it: what the watch window detects as a crash inside it.
   */
  async crashAndRestart(): Promise<void> {
    this.restarts += 1;
    await this.start();
  }

  async restartCount(): Promise<RestartObservation> {
    return { restartEpoch: this.epoch, restarts: this.restarts };
  }

  /** Agents running now, managed or not: never more than one. */
  get runningAgents(): number {
    return (this.settle() === null ? 0 : 1) + (this.orphan === null ? 0 : 1);
  }

  get scheduledRestarts(): number {
    return this.scheduled;
  }

  /**
   * Runs the restarts a transient unit would run; returns how many ran. Each is a try-restart,
   * as with the real managers: a unit stopped or failed meanwhile is left as it is.
   */
  async performScheduledRestarts(): Promise<number> {
    const count = this.scheduled;
    this.scheduled = 0;
    for (let index = 0; index < count; index += 1) {
      this.settle();
      if (this.state === 'active') await this.start();
    }
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
    this.settle();
    return this.orphan === null ? this.state : 'unknown';
  }

  /** Each start is a run: its number. */
  async currentRun(): Promise<string | null> {
    return this.starts.length === 0 ? null : `run-${this.starts.length}`;
  }

  async restart(_options: { readonly resetFailed?: boolean } = {}): Promise<{ readonly restarted: boolean }> {
    this.maybeFail('restart');
    this.refuseWithoutSupervisor();
    this.settle();
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
    return (this.settle() ?? this.orphan)?.start.path ?? null;
  }

  /** How the agent running now (managed or orphaned) behaves, or null when none runs: what a probe reaches. */
  runningBehaviour(): AgentBehaviour | null {
    return (this.settle() ?? this.orphan)?.start.behaviour ?? null;
  }

  async waitHealthy(
    expectedPath: string,
    limits: HealthLimits = MODEL_HEALTH_LIMITS,
    options: HealthWaitOptions = {},
  ): Promise<HealthVerdict> {
    this.maybeFail('waitHealthy');
    return waitForStableExecutable(async () => this.observe(), expectedPath, limits, this.clock, options);
  }

  /** What a poll of the real managers would see now. */
  private observe(): MainProcessObservation {
    const main = this.settle() ?? this.orphan;
    if (main !== null) return { pid: main.pid, executable: main.start.path };
    return this.state === 'failed' ? 'gave-up' : null;
  }

  /** Lets a crash-after-start agent die once time passed; returns the managed main process. */
  private settle(): MainProcess | null {
    const running = this.running;
    if (running !== null && this.diedBy(running, this.clock.monotonicMs())) {
      this.running = null;
      this.state = 'failed';
      this.restarts += RESTARTS_BEFORE_GIVING_UP;
    }
    return this.running;
  }

  private diedBy(running: MainProcess, nowMs: number): boolean {
    const { behaviour } = running.start;
    if (behaviour === 'crash-after-start') return nowMs > running.sinceMs;
    if (behaviour === 'crash-after-20s') return nowMs - running.sinceMs >= LATE_CRASH_AFTER_MS;
    return behaviour === 'crash-after-1s' && nowMs - running.sinceMs >= CRASH_AFTER_MS;
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
      this.restarts += RESTARTS_BEFORE_GIVING_UP;
      return;
    }
    // One PID per start, as a real restart gives: the health rule restarts its interval on a new one.
    this.running = { start: record, pid: this.starts.length, sinceMs: this.clock.monotonicMs() };
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
