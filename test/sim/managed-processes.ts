import { MemoryServiceManager } from '../../src/adapters/node/memory/memory-service-manager.js';
import { FailureSignal } from '../../src/app/common/failure-signal.js';
import type { ManagedSession } from '../../src/app/node/managed/managed-session.js';
import { translatePortError } from '../../src/app/common/translate-port-error.js';
import type { Clock } from '../../src/ports/common/clock.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import { requestFor, type Tracked } from './managed-operations.js';
import { slotLabel } from './managed-view.js';
import { LAYOUT, type ManagedWorld } from './managed-world.js';
import { orThrow, simProcess } from './sim-process.js';

// The processes of the managed simulation's host: one daemon per start of the unit, and the
// recovery unit's `recover`. Each is the production composition over the memory platform.

/** A simulated agent process that exited on its own (a crash-after-start candidate). */
export class ProcessDied extends Error {
  constructor() {
    super('the agent process exited before its stability interval ended');
    this.name = 'ProcessDied';
  }
}

/** One daemon process and its queue. */
export interface DaemonProcess {
  readonly identity: string;
  readonly session: ManagedSession;
  /**
   * A crash-after-start candidate, which in self-hosted mode is the daemon itself: it dies at
   * its first sleep (the stability interval) or at the end of its first round.
   */
  readonly doomed: boolean;
  readonly queue: Map<string, AgentUpgradeRequest>;
}

const STAGING = LAYOUT.downloadStaging;
const RECOVERY_MESSAGE = 'upgraded daemon failed repeatedly';
/** Instance ids and pids of the daemons count up from here, apart from other processes'. */
const DAEMON_NUMBER_BASE = 0x1000;

/** The daemon of the unit's current start: a new start (or a reboot) is a new process. */
export class DaemonProcesses {
  current: DaemonProcess | null = null;
  private spawned = 0;

  constructor(
    private readonly world: ManagedWorld,
    private readonly operations: () => readonly Tracked[],
  ) {}

  /** The current start's daemon; `spawned` is the trace line when it is a new one. */
  async ensure(reboots: number): Promise<{ process: DaemonProcess; spawned: string | null }> {
    const { world } = this;
    const identity = `${reboots}:${world.services.starts.length}`;
    if (this.current !== null && this.current.identity === identity) return { process: this.current, spawned: null };
    const self = await world.services.mainExecutable();
    const started = world.services.starts[world.services.starts.length - 1];
    const doomed = self !== null && started?.behaviour === 'crash-after-start';
    this.spawned += 1;
    const process = this.spawn(identity, self, doomed);
    this.current = process;
    const text = `daemon ${this.spawned} runs ${slotLabel(self)}${doomed ? ' (crash-after-start)' : ''}`;
    return { process, spawned: text };
  }

  /** The doomed process exits: the kernel drops its lock, systemd marks the unit failed. */
  async die(): Promise<void> {
    const { world } = this;
    world.lock.releaseAfterDeath();
    this.current = null;
    const path = await world.services.mainExecutable();
    // The model's only way into `failed` for a running crash-after-start agent; uninstrumented.
    if (path !== null) await MemoryServiceManager.prototype.waitHealthy.call(world.services, path);
  }

  /** A reboot killed every process. */
  forget(): void {
    this.current = null;
  }

  /** The session of the next start, as a test sees it: no self executable, nothing queued. */
  sweeper(): ManagedSession {
    const next = simProcess(this.world.ports(), this.world.config, this.world.logger);
    return orThrow(next.managed({ store: this.world.store, selfExecutable: null }));
  }

  /** `<staging> version` prints the version in the staged script (read from today's disk). */
  scriptVersionCommand(): void {
    const { world } = this;
    world.runner.setBehaviour(STAGING, async () => {
      const bytes = await world.fs.readFile(STAGING, 1024 * 1024);
      const version = bytes === null ? undefined : /# aks-flex-node (\S+)/.exec(new TextDecoder().decode(bytes))?.[1];
      return version === undefined
        ? { kind: 'exited', exitCode: 1, stdout: '', stderr: 'broken build' }
        : { kind: 'exited', exitCode: 0, stdout: `aks-flex-node version v${version}\n`, stderr: '' };
    });
  }

  private spawn(identity: string, self: string | null, doomed: boolean): DaemonProcess {
    const { world } = this;
    const number = DAEMON_NUMBER_BASE + this.spawned;
    const instanceId = number.toString(16).padStart(32, '0');
    const clock: Clock = doomed
      ? {
          nowMs: () => world.clock.nowMs(),
          monotonicMs: () => world.clock.monotonicMs(),
          sleep: async () => {
            throw new ProcessDied();
          },
        }
      : world.clock;
    const upgrader = simProcess({ ...world.ports(), clock }, world.config, world.logger, number);
    const session = orThrow(upgrader.managed({ store: world.store, selfExecutable: self, instanceId }));
    const queue = new Map<string, AgentUpgradeRequest>();
    // What the watch delivers to a new process: operations not yet started.
    for (const tracked of this.operations()) {
      const phase = world.store.get(tracked.spec.name)?.phase ?? null;
      if (phase === null || phase === 'Pending') queue.set(tracked.spec.name, requestFor(tracked));
    }
    return { identity, session, doomed, queue };
  }
}

/** OnFailure: `<last-good> recover --message …`, then reset-failed and restart if still failed. */
export async function recoveryScript(world: ManagedWorld): Promise<string> {
  let outcome: string;
  try {
    // The recovery unit's `recover` is a process of its own.
    const report = orThrow(
      await simProcess(world.ports(), world.config, world.logger).recover({
        message: RECOVERY_MESSAGE,
        failedRun: null,
      }),
    );
    outcome = report.recovered
      ? `recovered${report.rolledBackTo === null ? '' : ` to ${report.rolledBackTo}`}`
      : 'no record';
  } catch (error) {
    outcome = `exit 1 (${codeOf(expected(error))})`;
  }
  if ((await world.services.activity()) === 'failed') {
    try {
      await world.services.restart({ resetFailed: true });
      outcome += ', script restarted the unit';
    } catch (error) {
      outcome += `, script restart failed (${codeOf(expected(error))})`;
    }
  }
  return outcome;
}

/** Returns an operating error (a failure or a port error); rethrows crashes and programming errors. */
function expected(error: unknown): unknown {
  if (error instanceof FailureSignal || translatePortError(error) !== null) return error;
  throw error;
}

export function codeOf(error: unknown): string {
  if (error instanceof FailureSignal) return error.failure.code;
  return translatePortError(error)?.code ?? (error instanceof Error ? error.name : 'unknown');
}
