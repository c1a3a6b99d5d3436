import { SimulatedCrash, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import type { HandleOutcome } from '../../src/app/node/managed/agent-upgrade-handler.js';
import type { StartOutcome } from '../../src/app/node/managed/managed-session.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { FailureSignal } from '../../src/app/common/failure-signal.js';
import { translatePortError } from '../../src/app/common/translate-port-error.js';
import { problemsOf, SimFailure } from './harness/failure.js';
import { Trace } from './harness/trace.js';
import { guardActiveSlot } from './active-slot-guard.js';
import { tempEntries } from './host-invariants.js';
import { PortFaultInjector, type FaultChooser } from './managed-faults.js';
import { SETTLED_CHECKERS, STEP_CHECKERS } from './managed-invariants.js';
import { createOperation, describeSpec, requestFor, type Tracked, type UpgradeSpec } from './managed-operations.js';
import { codeOf, DaemonProcesses, ProcessDied, recoveryScript } from './managed-processes.js';
import { hostSummary, observeHost, slotLabel, VersionLabels } from './managed-view.js';
import { agentScript, CANARY, digestOf, LAYOUT, ManagedWorld } from './managed-world.js';
import { orThrow } from './sim-process.js';

export type { Behaviour, UpgradeSpec } from './managed-operations.js';

/**
 * A managed (self-hosted) host driven to quiescence the way systemd, the daemon and the cluster
 * would drive it, one step at a time, with the checkers of managed-invariants.ts run after every
 * step and at every quiescence, and one trace line per step. Faults come from outside: a port-fault
 * chooser consulted at every call of a faultable port method (managed-faults.ts), FS crash points
 * armed on `world.fs`, and the behaviour of each candidate. Used by the fault matrix and the
 * random schedules.
 *
 * How the host is modelled, round by round: scheduled restarts run first (the transient unit);
 * a failed unit triggers the OnFailure script, which runs `recover` and then resets and restarts
 * the unit if it is still failed; otherwise the daemon process of the current start of the unit
 * (managed-processes.ts) starts as production does — the startup gate under the host lock, then,
 * once it is open, the layout converged, at every start — and handles its queue. A request whose
 * handling threw or was requeued stays queued in that process and is retried in a later round,
 * with the operation's phase as the cluster has it then (a reconciler re-reads the object); a
 * stuck gate is run again.
 *
 * Trace symbols: `H` handle, `G` a start (gate, then migrate), `M` a sweep by the next start, `R` recovery
 * script (OnFailure), `S` scheduled restarts performed, `N` new daemon process, `P` publish call,
 * `!` injected port fault, `$` crash (power loss), `^` reboot, `x` the process died by itself,
 * `U` a new upgrade operation, `=` quiescent, `#` a decision made outside the host.
 */

export interface UpgradeResult {
  readonly phase: string | null;
  readonly rounds: number;
}

/** Rounds one upgrade may take to settle (I10): a failure path with faults needs about 8. */
const ROUNDS_MAX = 24;

type StepResult = 'ok' | 'error' | 'crash' | 'died';

export interface SimHostOptions {
  /** Durability kept by a crash (power loss); may change between crashes. */
  readonly rebootMode?: () => RebootMode;
  /** Called after every reboot, e.g. to arm a second crash during recovery. */
  readonly afterReboot?: (host: SimHost) => void;
  readonly faults?: FaultChooser;
  /** The test injects errnos into FS ops (a failed cleanup may leave a temp for the next sweep). */
  readonly fsErrnoFaults?: boolean;
  /** What every process reads instead of the simulation's CONFIG (e.g. with a health probe). */
  readonly config?: UpgraderConfig;
}

export class SimHost {
  readonly world = new ManagedWorld();
  readonly trace = new Trace();
  /** Every binary digest the host may legitimately hold, with its version label. */
  readonly versions = new VersionLabels();
  private readonly ops = new Map<string, Tracked>();
  private readonly faults: PortFaultInjector;
  private readonly daemons: DaemonProcesses;
  private reboots = 0;
  private active: Tracked | null = null;

  constructor(private readonly options: SimHostOptions = {}) {
    if (options.config !== undefined) this.world.config = options.config;
    this.faults = new PortFaultInjector(options.faults ?? (() => null), () => this.active !== null, this.trace);
    this.daemons = new DaemonProcesses(this.world, () => [...this.ops.values()]);
    this.versions.set(digestOf(agentScript('1.0.0')), 'v1.0.0');
    guardActiveSlot(this.world.fs);
    this.faults.interceptStore(this.world.store);
    this.faults.interceptHost(this.world.services, this.world.container);
    this.daemons.scriptVersionCommand();
  }

  /** The unit's first start: the legacy agent runs from the compatibility entry. */
  async boot(): Promise<void> {
    await this.world.services.restart();
  }

  /**
   * Creates the operation, lets the running daemon see it, and drives the host until nothing is
   * left to do. Throws SimFailure when an invariant breaks or the host does not settle.
   */
  async upgrade(spec: UpgradeSpec): Promise<UpgradeResult> {
    const previousDigest = (await observeHost(this.world)).currentDigest;
    if (previousDigest === null) throw this.failure('I1: no current binary before the upgrade');
    const tracked = createOperation(this.world, this.versions, spec, previousDigest);
    this.ops.set(spec.name, tracked);
    this.active = tracked;
    this.faults.startUpgrade();
    await this.checkStep('U', describeSpec(spec));
    this.daemons.current?.queue.set(spec.name, requestFor(tracked));
    for (let round = 0; round < ROUNDS_MAX; round += 1) {
      if (await this.round()) {
        await this.checkStep('=', `quiescent after ${round + 1} rounds`);
        await this.checkSettled(tracked);
        this.active = null;
        return { phase: this.world.store.get(spec.name)?.phase ?? null, rounds: round + 1 };
      }
    }
    throw this.failure(`I10: no quiescence within ${ROUNDS_MAX} rounds`);
  }

  /** A trace line for a decision made outside the host (a crash armed, a seed). */
  note(text: string): void {
    this.trace.note(text);
  }

  /** Trace lines, numbered, one per step. */
  formatTrace(): string {
    return this.trace.format();
  }

  /** One round of the host: systemd, the recovery unit, the daemon. Returns true when quiescent. */
  private async round(): Promise<boolean> {
    const { world } = this;
    const restarts = await world.services.performScheduledRestarts();
    if (restarts > 0) await this.checkStep('S', `restart x${restarts}`);
    if ((await world.services.activity()) === 'failed') {
      await this.step('R', 'recovery script', () => recoveryScript(world));
      return false;
    }
    const { process, spawned } = await this.daemons.ensure(this.reboots);
    if (spawned !== null) await this.checkStep('N', spawned);
    let gate: StartOutcome | null = null;
    // The daemon's start, as production runs it: the gate under the host lock, then (once open)
    // the interrupted-activation check and the layout converged.
    const gated = await this.step('G', 'start', async () => {
      gate = orThrow(await process.session.start());
      return gate.kind === 'open' ? 'open' : `${gate.kind} ${'reason' in gate ? gate.reason : ''}`;
    });
    if (gated !== 'ok') return false;
    const opened = (gate as StartOutcome | null)?.kind === 'open';
    if (opened) {
      for (const [name, request] of [...process.queue]) {
        const result = await this.step('H', `handle ${name}`, async () => {
          // A requeued operation is handled as the cluster has it now (the daemon re-reads it).
          const phase = world.store.get(name)?.phase ?? null;
          const outcome: HandleOutcome = orThrow(await process.session.handle({ ...request, phase }));
          if (outcome.kind !== 'requeue') process.queue.delete(name);
          return outcome.kind;
        });
        if (result === 'crash' || result === 'died') return false;
      }
    }
    if (process.doomed && this.daemons.current === process) {
      await this.step('x', 'the candidate exits before it is stable', async () => {
        await this.daemons.die();
        return '';
      });
      return false;
    }
    if (!opened || process.queue.size > 0 || world.services.scheduledRestarts > 0) return false;
    return (await world.services.activity()) === 'active' && (await world.fs.lstat(LAYOUT.record)) === null;
  }

  /** Power loss: the world reboots in the chosen durability mode and the unit starts again. */
  private async reboot(): Promise<void> {
    const mode = this.options.rebootMode?.() ?? 'prefix';
    this.reboots += 1;
    this.daemons.forget();
    await this.world.reboot(mode);
    guardActiveSlot(this.world.fs);
    this.faults.interceptHost(this.world.services, this.world.container);
    await this.checkStep(
      '^',
      `reboot (${mode}); the unit starts ${slotLabel(await this.world.services.mainExecutable())}`,
    );
    this.options.afterReboot?.(this);
  }

  /** Runs one step; a crash reboots, a death fails the unit, an expected failure is its result. */
  private async step(symbol: string, label: string, body: () => Promise<string>): Promise<StepResult> {
    let result: StepResult = 'ok';
    let detail: string;
    try {
      detail = await body();
    } catch (error) {
      if (error instanceof SimulatedCrash) {
        const where = error.op === null ? 'a later call' : `op ${error.op.index} ${error.op.op} ${error.op.path}`;
        this.trace.add('$', `${label}: crash at ${where}`);
        await this.reboot();
        return 'crash';
      }
      if (error instanceof ProcessDied) {
        await this.daemons.die();
        await this.checkStep('x', `${label}: the candidate exited before it was stable`);
        return 'died';
      }
      if (error instanceof SimFailure) throw error;
      if (!(error instanceof FailureSignal) && translatePortError(error) === null) {
        throw this.failure(
          `${label} threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
      }
      detail = `error ${codeOf(error)}`;
      result = 'error';
    }
    await this.checkStep(symbol, `${label}${detail === '' ? '' : ` -> ${detail}`}`);
    return result;
  }

  /** Traces the step with the host it left, then runs the per-step checkers. */
  private async checkStep(symbol: string, text: string): Promise<void> {
    const { store } = this.world;
    const host = await observeHost(this.world);
    this.trace.add(symbol, text, hostSummary(host, this.versions, store, [...this.ops.keys()].at(-1)));
    const active = this.active;
    const phase = active === null ? null : (store.get(active.spec.name)?.phase ?? null);
    const problems = problemsOf(
      {
        host,
        store,
        versions: this.versions,
        operations: [...this.ops.keys()],
        active: active === null ? null : { tracked: active, phase },
      },
      STEP_CHECKERS,
    );
    if (active !== null) active.lastPhase = phase;
    if (problems.length > 0) throw this.failure(...problems);
  }

  /** At quiescence: the settled checkers, after the next start swept what FS faults left. */
  private async checkSettled(tracked: Tracked): Promise<void> {
    const { world } = this;
    const host = await observeHost(world);
    const temps = await this.tempsAfterFaults();
    // The agent that runs is the binary current names (a legacy process runs the same bytes).
    const running =
      (await world.services.mainExecutable()) === null
        ? null
        : (world.services.starts[world.services.starts.length - 1]?.digest ?? null);
    const name = tracked.spec.name;
    const exposed =
      JSON.stringify(world.logger.lines) +
      JSON.stringify(world.store.history(name)) +
      JSON.stringify(world.runner.runs);
    const view = {
      host,
      store: world.store,
      versions: this.versions,
      tracked,
      temps,
      running,
      exposed,
      canary: CANARY,
    };
    const problems = problemsOf(view, SETTLED_CHECKERS);
    if (problems.length > 0) throw this.failure(...problems);
  }

  /**
   * Temp entries at quiescence. When an errno was injected into the FS, a cleanup op itself may
   * have failed (nothing can remove a file the disk refuses to unlink); such a leftover must then
   * be swept by the next convergence, which every daemon start and every upgrade runs first.
   */
  private async tempsAfterFaults(): Promise<string[]> {
    const temps = tempEntries(this.world.fs.snapshot());
    if (temps.length === 0 || this.options.fsErrnoFaults !== true) return temps;
    this.world.fs.clearFaults();
    const session = this.daemons.sweeper();
    await this.step('M', `the next start sweeps ${temps.length} temp(s)`, async () => {
      return orThrow(await session.start()).kind;
    });
    return tempEntries(this.world.fs.snapshot());
  }

  private failure(...problems: string[]): SimFailure {
    return new SimFailure(problems, this.trace);
  }
}
