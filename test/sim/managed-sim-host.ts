import { createHash } from 'node:crypto';
import { SimulatedCrash, type RebootMode, type Snapshot } from '../../src/adapters/memory/memory-file-system.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/memory/memory-service-manager.js';
import type { HandleOutcome } from '../../src/app/managed/agent-upgrade-handler.js';
import type { ManagedSession, StartOutcome } from '../../src/app/managed/managed-session.js';
import { FailureSignal } from '../../src/app/failure-signal.js';
import { translatePortError } from '../../src/app/translate-port-error.js';
import { parseRecord, type UpgradeRecord } from '../../src/domain/upgrade-record.js';
import type { Clock } from '../../src/ports/clock.js';
import type { AgentUpgradeRequest, OperationPhase } from '../../src/ports/operation-store.js';
import { releaseArchive } from '../support/archive/index.js';
import { guardActiveSlotCheaply } from './active-slot-guard.js';
import { orThrow, simProcess } from './sim-process.js';
import { tempEntries } from './layout-world.js';
import { agentScript, CANARY, CONFIG, digestOf, LAYOUT, MEMBER, ManagedWorld } from './managed-world.js';

/**
 * A managed (self-hosted) host driven to quiescence the way systemd, the daemon and the cluster
 * would drive it, one step at a time, with every invariant (docs/protocol.md#invariants-i1i12)
 * that the step can break checked after it, and one trace line per step. Faults come from outside:
 * a port-fault chooser consulted at every call of a faultable port method, FS crash points armed
 * on `world.fs`, and the behaviour of each candidate. Used by the fault matrix and the random
 * schedules.
 *
 * How the host is modelled, round by round: scheduled restarts run first (the transient unit);
 * a failed unit triggers the OnFailure script, which runs `recover` and then resets and restarts
 * the unit if it is still failed; otherwise the daemon process of the current start of the unit
 * (a new one after every start or reboot, remembering nothing, built by the production
 * composition over the memory platform) starts as production does — the startup gate under the
 * host lock, then, once it is open, the layout converged, at every start — and handles its queue. A new
 * process's queue is what the watch delivers: operations still without a status or Pending. A
 * request whose handling threw or was requeued stays queued in that process and is retried in a
 * later round, with the operation's phase as the cluster has it then (a reconciler re-reads the
 * object); a stuck gate is run again. A crash-after-start candidate, which in self-hosted mode is
 * the daemon itself, dies at its first sleep (the stability interval) or at the end of its first
 * round, and systemd marks the unit failed.
 *
 * Trace symbols: `H` handle, `G` a start (gate, then migrate), `M` a sweep by the next start, `R` recovery
 * script (OnFailure), `S` scheduled restarts performed, `N` new daemon process, `P` publish call,
 * `!` injected port fault, `$` crash (power loss), `^` reboot, `x` the process died by itself,
 * `U` a new upgrade operation, `=` quiescent.
 */

/** How a candidate behaves: the service behaviours, or a release whose `version` command fails. */
export type Behaviour = AgentBehaviour | 'version-fails';

export type PortMethod =
  | 'markInProgress'
  | 'publish'
  | 'scheduleRestart'
  | 'restart'
  | 'waitHealthy'
  | 'convergeAssets'
  | 'install'
  | 'digest';

export type PortFault =
  /** A refused cluster write (HTTP status, or a network error), or one applied whose response was lost. */
  | { readonly kind: 'cluster'; readonly status: number | null; readonly afterWrite: boolean; readonly times: number }
  /** The service manager or the container copy fails this call. */
  | { readonly kind: 'fail' };

export interface PortCall {
  readonly method: PortMethod;
  /** 1 for the first call of `method` in this upgrade, 2 for the second, … */
  readonly ordinal: number;
}

export type FaultChooser = (call: PortCall) => PortFault | null;

const cluster = (status: number | null, afterWrite = false, times = 1): PortFault => ({
  kind: 'cluster',
  status,
  afterWrite,
  times,
});

/** Every way each faultable port call can fail. */
export const FAULT_OPTIONS: Readonly<Record<PortMethod, readonly PortFault[]>> = {
  markInProgress: [cluster(409), cluster(500), cluster(null), cluster(500, true)],
  publish: [cluster(409), cluster(500), cluster(null), cluster(500, true), cluster(500, false, 5)],
  scheduleRestart: [{ kind: 'fail' }],
  restart: [{ kind: 'fail' }],
  waitHealthy: [{ kind: 'fail' }],
  convergeAssets: [{ kind: 'fail' }],
  install: [{ kind: 'fail' }],
  digest: [{ kind: 'fail' }],
};

export function describeFault(call: PortCall, fault: PortFault): string {
  if (fault.kind === 'fail') return `${call.method}#${call.ordinal}`;
  const what = fault.status === null ? 'net' : String(fault.status);
  return `${call.method}#${call.ordinal}:${what}${fault.afterWrite ? '+lost' : ''}${fault.times > 1 ? `x${fault.times}` : ''}`;
}

/** A simulated agent process that exited on its own (a crash-after-start candidate). */
export class ProcessDied extends Error {
  constructor() {
    super('the agent process exited before its stability interval ended');
    this.name = 'ProcessDied';
  }
}

/** A broken invariant or a run that did not settle; the message carries the trace. */
export class SimFailure extends Error {
  override name = 'SimFailure';
}

export interface UpgradeSpec {
  readonly name: string;
  readonly version: string;
  readonly behaviour: Behaviour;
  /** Request a digest that does not match the archive (fails before the switch). */
  readonly wrongDigest?: boolean;
}

export interface UpgradeResult {
  readonly phase: OperationPhase | null;
  readonly rounds: number;
}

const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';
const BINARY_MAX_BYTES = CONFIG.artifact.maxBinaryBytes;
const STAGING = LAYOUT.downloadStaging;
const RECOVERY_MESSAGE = 'upgraded daemon failed repeatedly';
/** Rounds one upgrade may take to settle (I10): a failure path with faults needs about 8. */
const ROUNDS_MAX = 24;

interface HostView {
  /** The real path the agent's binary is at: current's target, or the legacy entry. */
  readonly current: string | null;
  readonly viaCurrent: boolean;
  readonly currentDigest: string | null;
  readonly currentExecutable: boolean;
  readonly lastGood: string | null;
  readonly nspawn: string | null;
  readonly record: UpgradeRecord | null | 'invalid';
}

/** One daemon process: the production composition over the memory platform, and its queue. */
interface Process {
  readonly identity: string;
  readonly session: ManagedSession;
  readonly doomed: boolean;
  readonly queue: Map<string, AgentUpgradeRequest>;
}

interface Tracked {
  readonly spec: UpgradeSpec;
  readonly parameters: Readonly<Record<string, string>>;
  readonly uid: string;
  readonly candidateDigest: string;
  readonly previousDigest: string;
  lastPhase: OperationPhase | null;
}

type StepResult = 'ok' | 'error' | 'crash' | 'died';

export interface SimHostOptions {
  /** Durability kept by a crash (power loss); may change between crashes. */
  readonly rebootMode?: () => RebootMode;
  /** Called after every reboot, e.g. to arm a second crash during recovery. */
  readonly afterReboot?: (host: SimHost) => void;
  readonly faults?: FaultChooser;
  /** The test injects errnos into FS ops (a failed cleanup may leave a temp for the next sweep). */
  readonly fsErrnoFaults?: boolean;
}

export class SimHost {
  readonly world = new ManagedWorld();
  readonly trace: string[] = [];
  /** Every binary digest the host may legitimately hold, with its version label. */
  readonly versions = new Map<string, string>();
  private readonly ops = new Map<string, Tracked>();
  private readonly counts = new Map<PortMethod, number>();
  private process: Process | null = null;
  private reboots = 0;
  private processes = 0;
  private active: Tracked | null = null;
  private readonly faults: FaultChooser;

  constructor(private readonly options: SimHostOptions = {}) {
    this.faults = options.faults ?? (() => null);
    this.versions.set(digestOf(agentScript('1.0.0')), 'v1.0.0');
    guardActiveSlotCheaply(this.world.fs);
    this.interceptStore();
    this.interceptHost();
    this.scriptVersionCommand();
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
    const tracked = await this.createOperation(spec);
    this.active = tracked;
    this.counts.clear();
    await this.checkStep(
      'U',
      `${spec.name} v${spec.version} ${spec.behaviour}${spec.wrongDigest === true ? ' wrong-digest' : ''}`,
    );
    this.process?.queue.set(spec.name, this.requestFor(spec.name));
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
    this.log('#', text);
  }

  /** Trace lines, numbered, one per step. */
  formatTrace(): string {
    return this.trace.map((line, index) => `${String(index).padStart(3, ' ')} ${line}`).join('\n');
  }

  // ---- one round of the host: systemd, the recovery unit, the daemon ----

  /** Returns true when the host is quiescent. */
  private async round(): Promise<boolean> {
    const { world } = this;
    const restarts = await world.services.performScheduledRestarts();
    if (restarts > 0) await this.checkStep('S', `restart x${restarts}`);
    if ((await world.services.activity()) === 'failed') {
      await this.step('R', 'recovery script', () => this.recoveryScript());
      return false;
    }
    const process = await this.ensureProcess();
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
    if (process.doomed && this.process === process) {
      await this.step('x', 'the candidate exits before it is stable', async () => {
        await this.die();
        return '';
      });
      return false;
    }
    if (!opened || process.queue.size > 0 || world.services.scheduledRestarts > 0) return false;
    return (await world.services.activity()) === 'active' && (await world.fs.lstat(LAYOUT.record)) === null;
  }

  /** OnFailure: `<last-good> recover --message …`, then reset-failed and restart if still failed. */
  private async recoveryScript(): Promise<string> {
    const { world } = this;
    let outcome: string;
    try {
      // The recovery unit's `recover` is a process of its own.
      const report = orThrow(await simProcess(world.ports(), CONFIG, world.logger).recover(RECOVERY_MESSAGE));
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

  /** A daemon process per start of the unit: a new start (or a reboot) is a new process. */
  private async ensureProcess(): Promise<Process> {
    const { world } = this;
    const identity = `${this.reboots}:${world.services.starts.length}`;
    if (this.process !== null && this.process.identity === identity) return this.process;
    const self = await world.services.mainExecutable();
    const started = world.services.starts[world.services.starts.length - 1];
    const doomed = self !== null && started?.behaviour === 'crash-after-start';
    this.processes += 1;
    const process = this.spawn(identity, self, doomed);
    this.process = process;
    await this.checkStep(
      'N',
      `daemon ${this.processes} runs ${this.slotLabel(self)}${doomed ? ' (crash-after-start)' : ''}`,
    );
    return process;
  }

  private spawn(identity: string, self: string | null, doomed: boolean): Process {
    const { world } = this;
    const instanceId = (0x1000 + this.processes).toString(16).padStart(32, '0');
    const clock: Clock = doomed
      ? {
          nowMs: () => world.clock.nowMs(),
          monotonicMs: () => world.clock.monotonicMs(),
          sleep: async () => {
            throw new ProcessDied();
          },
        }
      : world.clock;
    const upgrader = simProcess({ ...world.ports(), clock }, CONFIG, world.logger, 0x1000 + this.processes);
    const session = orThrow(upgrader.managed({ store: world.store, selfExecutable: self, instanceId }));
    const queue = new Map<string, AgentUpgradeRequest>();
    // What the watch delivers to a new process: operations not yet started.
    for (const name of this.ops.keys()) {
      const phase = world.store.get(name)?.phase ?? null;
      if (phase === null || phase === 'Pending') queue.set(name, this.requestFor(name));
    }
    return { identity, session, doomed, queue };
  }

  /** The doomed process exits: the kernel drops its lock, systemd marks the unit failed. */
  private async die(): Promise<void> {
    const { world } = this;
    world.lock.releaseAfterDeath();
    this.process = null;
    const path = await world.services.mainExecutable();
    // The model's only way into `failed` for a running crash-after-start agent; uninstrumented.
    if (path !== null) await MemoryServiceManager.prototype.waitHealthy.call(world.services, path);
  }

  private async reboot(): Promise<void> {
    const mode = this.options.rebootMode?.() ?? 'prefix';
    this.reboots += 1;
    this.process = null;
    await this.world.reboot(mode);
    guardActiveSlotCheaply(this.world.fs);
    this.interceptHost();
    await this.checkStep(
      '^',
      `reboot (${mode}); the unit starts ${this.slotLabel(await this.world.services.mainExecutable())}`,
    );
    this.options.afterReboot?.(this);
  }

  // ---- steps ----

  private async step(symbol: string, label: string, body: () => Promise<string>): Promise<StepResult> {
    let result: StepResult = 'ok';
    let detail: string;
    try {
      detail = await body();
    } catch (error) {
      if (error instanceof SimulatedCrash) {
        this.log(
          '$',
          `${label}: crash at ${error.op === null ? 'a later call' : `op ${error.op.index} ${error.op.op} ${error.op.path}`}`,
        );
        await this.reboot();
        return 'crash';
      }
      if (error instanceof ProcessDied) {
        await this.die();
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

  /** A trace line; `summary` describes the host after the step (omitted inside a port call). */
  private log(symbol: string, text: string, summary = ''): void {
    this.trace.push(summary === '' ? `${symbol} ${text}` : `${symbol} ${text.padEnd(48, ' ')} | ${summary}`);
  }

  // ---- invariants ----

  /** Logs the step with the host it left, then checks I1, I2, I4, I5 and I7. */
  private async checkStep(symbol: string, text: string): Promise<void> {
    const view = await this.view();
    this.log(symbol, text, this.hostSummary(view));
    const problems: string[] = [];
    // I1: the agent starts from current, or from the legacy entry while current does not resolve.
    if (view.currentDigest === null) problems.push('I1: no runnable agent binary');
    else if (!view.currentExecutable) problems.push('I1: the current binary is not executable');
    else if (!this.versions.has(view.currentDigest))
      problems.push(`I1: the current binary has an unknown digest ${view.currentDigest.slice(0, 8)} (torn or empty)`);
    if (view.record === 'invalid') problems.push('I4: the record does not parse');
    if (this.world.store.violations.length > 0)
      problems.push(`I5: a second, different terminal status: ${JSON.stringify(this.world.store.violations)}`);
    for (const name of this.ops.keys()) {
      if (this.world.store.terminalWrites(name) > 1)
        problems.push(`I5: ${name} became terminal ${this.world.store.terminalWrites(name)} times`);
    }
    const active = this.active;
    if (active !== null) {
      const current = view.currentDigest;
      if (current !== active.previousDigest && current !== active.candidateDigest) {
        problems.push(
          `I2: current names ${this.versionOf(current)}, neither the previous ${this.versionOf(active.previousDigest)} nor the candidate`,
        );
      }
      const phase = this.world.store.get(active.spec.name)?.phase ?? null;
      if (phase === 'Complete' && active.lastPhase !== 'Complete') {
        const copy = view.nspawn;
        if (current !== active.candidateDigest || copy !== current) {
          problems.push(
            `I7: Complete published with current ${this.versionOf(current)} and nspawn ${this.versionOf(copy)}; candidate ${this.versionOf(active.candidateDigest)}`,
          );
        }
      }
      active.lastPhase = phase;
    }
    if (problems.length > 0) throw this.failure(problems.join('; '));
  }

  /** At quiescence: I5 exactly once, I6, I7, I12, no temps, I8, and the unit runs current. */
  private async checkSettled(tracked: Tracked): Promise<void> {
    const { world } = this;
    const snapshot = world.fs.snapshot();
    const view = await this.view();
    const problems: string[] = [];
    const name = tracked.spec.name;
    const status = world.store.get(name);
    if (world.store.terminalWrites(name) !== 1)
      problems.push(
        `I5: ${name} has ${world.store.terminalWrites(name)} terminal writes (phase ${status?.phase ?? 'none'})`,
      );
    if (view.record !== null) problems.push('I6: the record is still there');
    const current = view.currentDigest;
    const copy = view.nspawn;
    if (status?.phase === 'Complete') {
      if (current !== tracked.candidateDigest) problems.push(`I12: Complete but current is ${this.versionOf(current)}`);
      if (tracked.spec.behaviour !== 'healthy' || tracked.spec.wrongDigest === true)
        problems.push(`I12: Complete for a ${tracked.spec.behaviour} candidate`);
    } else if (status?.phase === 'Failed') {
      if (current !== tracked.previousDigest)
        problems.push(
          `I12: Failed but current is ${this.versionOf(current)}, not the previous ${this.versionOf(tracked.previousDigest)}`,
        );
    } else {
      problems.push(`I5: ${name} ended ${status?.phase ?? 'without a status'}`);
    }
    if (copy !== current)
      problems.push(`I7/I12: nspawn holds ${this.versionOf(copy)} while current is ${this.versionOf(current)}`);
    const temps = await this.tempsAfterFaults(snapshot);
    if (temps.length > 0) problems.push(`temp entries left: ${temps.join(', ')}`);
    // The agent that runs is the binary current names (a legacy process runs the same bytes).
    const running =
      (await world.services.mainExecutable()) === null
        ? null
        : (world.services.starts[world.services.starts.length - 1]?.digest ?? null);
    if (running !== current)
      problems.push(`I12: the unit runs ${this.versionOf(running)}, not current ${this.versionOf(current)}`);
    const exposed =
      JSON.stringify(world.logger.lines) +
      JSON.stringify(world.store.history(name)) +
      JSON.stringify(world.runner.runs);
    if (exposed.includes(CANARY)) problems.push('I8: the URL query reached a log line, status or argv');
    if (problems.length > 0) throw this.failure(problems.join('; '));
  }

  /**
   * Temp entries at quiescence. When an errno was injected into the FS, a cleanup op itself may
   * have failed (nothing can remove a file the disk refuses to unlink); such a leftover must then
   * be swept by the next convergence, which every daemon start and every upgrade runs first.
   */
  private async tempsAfterFaults(snapshot: Snapshot): Promise<string[]> {
    const temps = tempEntries(snapshot);
    if (temps.length === 0 || this.options.fsErrnoFaults !== true) return temps;
    this.world.fs.clearFaults();
    const next = simProcess(this.world.ports(), CONFIG, this.world.logger);
    const session = orThrow(next.managed({ store: this.world.store, selfExecutable: null }));
    await this.step(
      'M',
      `the next start sweeps ${temps.length} temp(s)`,
      async () => orThrow(await session.start()).kind,
    );
    return tempEntries(this.world.fs.snapshot());
  }

  private failure(message: string): SimFailure {
    return new SimFailure(`${message}\n${this.formatTrace()}`);
  }

  // ---- observations ----

  /**
   * The host as the invariants need it, read through the FS port (cheaper than a snapshot of the
   * whole tree after every step): what current (or, before migration, the entry) resolves to,
   * last-good, the nspawn copy and the record.
   */
  private async view(): Promise<HostView> {
    const { fs } = this.world;
    let target = await fs.resolve(LAYOUT.current);
    const viaCurrent = target.kind === 'resolved';
    if (!viaCurrent) target = await fs.resolve(LAYOUT.entry);
    const file = target.kind === 'resolved' && target.stat.kind === 'file' ? target : null;
    const lastGood = await fs.resolve(LAYOUT.lastGood);
    const copy = await fs.lstat(CONTAINER_COPY);
    return {
      current: target.kind === 'resolved' ? target.path : null,
      viaCurrent,
      currentDigest: file === null ? null : (await fs.hashFile(file.path, BINARY_MAX_BYTES)).sha256,
      currentExecutable: file !== null && (file.stat.mode & 0o111) !== 0,
      lastGood: lastGood.kind === 'resolved' ? lastGood.path : null,
      nspawn: copy?.kind === 'file' ? (await fs.hashFile(CONTAINER_COPY, BINARY_MAX_BYTES)).sha256 : null,
      record: await this.readRecord(),
    };
  }

  private async readRecord(): Promise<UpgradeRecord | null | 'invalid'> {
    const stat = await this.world.fs.lstat(LAYOUT.record);
    if (stat === null) return null;
    if (stat.kind !== 'file') return 'invalid';
    const bytes = await this.world.fs.readFile(LAYOUT.record, 64 * 1024);
    if (bytes === null) return null;
    const parsed = parseRecord(new TextDecoder().decode(bytes));
    return parsed.ok ? parsed.value : 'invalid';
  }

  private versionOf(digest: string | null): string {
    return digest === null ? 'nothing' : (this.versions.get(digest) ?? `unknown ${digest.slice(0, 8)}`);
  }

  private slotLabel(path: string | null): string {
    if (path === null) return 'nothing';
    return path === LAYOUT.blue ? 'blue' : path === LAYOUT.green ? 'green' : path === LAYOUT.entry ? 'legacy' : path;
  }

  /** `cur=green:v2.0.0 lg=blue rec=c:green,sw,fail:E_UNHEALTHY,rr up1=InProgress`. */
  private hostSummary(view: HostView): string {
    const record = view.record;
    const recordText = record === null ? '-' : record === 'invalid' ? 'INVALID' : summarizeRecord(record);
    const phases = [...this.ops.keys()]
      .slice(-1)
      .map((name) => `${name}=${this.world.store.get(name)?.phase ?? 'new'}`);
    const current = view.viaCurrent ? this.slotLabel(view.current) : 'legacy';
    return `cur=${current}:${this.versionOf(view.currentDigest)} lg=${this.slotLabel(view.lastGood)} nspawn=${this.versionOf(view.nspawn)} rec=${recordText} ${phases.join(' ')}`;
  }

  // ---- setup ----

  private async createOperation(spec: UpgradeSpec): Promise<Tracked> {
    const { world } = this;
    const script =
      spec.behaviour === 'version-fails'
        ? `#!/bin/sh\n# broken build ${spec.version}\nexit 1\n`
        : agentScript(spec.version);
    const archive = releaseArchive(MEMBER, script);
    const url = `https://releases.example/agent-${spec.version}-${spec.name}.tar.gz?sig=${CANARY}`;
    world.source.archives.set(url, archive);
    const candidateDigest = digestOf(script);
    this.versions.set(candidateDigest, `v${spec.version}${spec.behaviour === 'version-fails' ? '(broken)' : ''}`);
    if (spec.behaviour !== 'version-fails') world.behaviours.set(candidateDigest, spec.behaviour);
    const parameters = {
      downloadURL: url,
      sha256: spec.wrongDigest === true ? '0'.repeat(64) : createHash('sha256').update(archive).digest('hex'),
    };
    const ref = world.store.create({ name: spec.name, parameters });
    const previousDigest = (await this.view()).currentDigest;
    if (previousDigest === null) throw this.failure('I1: no current binary before the upgrade');
    const tracked: Tracked = { spec, parameters, uid: ref.uid ?? '', candidateDigest, previousDigest, lastPhase: null };
    this.ops.set(spec.name, tracked);
    return tracked;
  }

  private requestFor(name: string): AgentUpgradeRequest {
    const tracked = this.ops.get(name);
    if (tracked === undefined) throw new Error(`unknown operation ${name}`);
    return { operation: { name, uid: tracked.uid }, phase: null, parameters: tracked.parameters };
  }

  /** `<staging> version` prints the version in the staged script (read from today's disk). */
  private scriptVersionCommand(): void {
    this.world.runner.setBehaviour(STAGING, async () => {
      const bytes = await this.world.fs.readFile(STAGING, 1024 * 1024);
      const version = bytes === null ? undefined : /# aks-flex-node (\S+)/.exec(new TextDecoder().decode(bytes))?.[1];
      return version === undefined
        ? { kind: 'exited', exitCode: 1, stdout: '', stderr: 'broken build' }
        : { kind: 'exited', exitCode: 0, stdout: `aks-flex-node version v${version}\n`, stderr: '' };
    });
  }

  /** The cluster survives reboots: its methods are wrapped once. */
  private interceptStore(): void {
    const { store } = this.world;
    for (const method of ['markInProgress', 'publish'] as const) {
      wrapMethod(store, method, () => {
        const fault = this.choose(method);
        if (fault?.kind === 'cluster') {
          const options = { status: fault.status, afterWrite: fault.afterWrite };
          store.failTimes(method, fault.times, options);
        }
      });
    }
    wrapMethod(store, 'publish', () => this.log('P', 'publish call'));
  }

  /** The service manager and the container copy are rebuilt at every reboot. */
  private interceptHost(): void {
    const { services, container } = this.world;
    for (const method of ['scheduleRestart', 'restart', 'waitHealthy', 'convergeAssets'] as const) {
      wrapMethod(services, method, () => {
        if (this.choose(method) !== null) services.failNext(method);
      });
    }
    for (const method of ['install', 'digest'] as const) {
      wrapMethod(container, method, () => {
        if (this.choose(method) !== null) container.failNext(method);
      });
    }
  }

  private choose(method: PortMethod): PortFault | null {
    const ordinal = (this.counts.get(method) ?? 0) + 1;
    this.counts.set(method, ordinal);
    if (this.active === null) return null;
    const call = { method, ordinal };
    const fault = this.faults(call);
    if (fault !== null) this.log('!', describeFault(call, fault));
    return fault;
  }
}

function summarizeRecord(record: UpgradeRecord): string {
  const parts = [`c:${record.candidate ?? '-'}`];
  if (record.switchCommitted) parts.push('sw');
  if (record.failure !== null) parts.push(`fail:${record.failure.code}`);
  if (record.recoveryRequired) parts.push('rr');
  if (record.completed) parts.push('done');
  return parts.join(',');
}

/** Returns an operating error (a failure or a port error); rethrows crashes and programming errors. */
function expected(error: unknown): unknown {
  if (error instanceof FailureSignal || translatePortError(error) !== null) return error;
  throw error;
}

function codeOf(error: unknown): string {
  if (error instanceof FailureSignal) return error.failure.code;
  return translatePortError(error)?.code ?? (error instanceof Error ? error.name : 'unknown');
}

/** Replaces `target[method]` with a wrapper that runs `before` first (an instance property). */
function wrapMethod<T extends object>(target: T, method: keyof T & string, before: () => void): void {
  const original = target[method];
  if (typeof original !== 'function') throw new TypeError(`${method} is not a method`);
  const bound = (original as (...args: unknown[]) => unknown).bind(target);
  Object.defineProperty(target, method, {
    configurable: true,
    writable: true,
    value: (...args: unknown[]) => {
      before();
      return bound(...args);
    },
  });
}
