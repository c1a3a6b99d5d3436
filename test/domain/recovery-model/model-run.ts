import { decideStartup } from '../../../src/domain/node/recovery/startup-policy.js';
import { SimFailure } from '../../sim/harness/failure.js';
import { Trace } from '../../sim/harness/trace.js';
import { applyStartupDecision, managedEffects, runRecoverCommand, type DaemonControl } from './model-effects.js';
import { freshProc, initialWorld, runs, startupInput, type Proc, type Scenario, type World } from './model-world.js';

/**
 * One run of the recovery convergence model: the old daemon runs the managed path and possibly
 * dies part-way, then daemons run the startup policy's decisions one at a time against the model
 * host, crashing after the steps the scenario names, until one opens the gate.
 *
 * Trace symbols: `M` the managed path (`managed:<effects applied>`), `S` a startup decision
 * (`<rule>:<kind>`), `R` a decision of `recover`, `L` a crash loop handed to `recover`, `$` a crash.
 */

/** Bounds that turn a livelock of the model into a failure rather than a hang. */
const RECOVER_RUNS_MAX = 5;
const DAEMON_ATTEMPTS_MAX = 5;
const STARTUP_STEPS_MAX = 60;

export interface Outcome {
  readonly world: World;
  readonly steps: number;
  readonly trace: Trace;
}

class ModelRun implements DaemonControl {
  readonly world: World;
  readonly trace = new Trace();
  proc: Proc;
  private recoverRuns = 0;

  constructor(readonly scenario: Scenario) {
    this.world = initialWorld(scenario);
    this.proc = freshProc(this.world, scenario);
  }

  /** I2: the older release is never made current; I1: current always runs something. */
  checkHost(): void {
    if (this.world.slots[this.world.current] === 'v0') this.fail('downgrade');
  }

  fail(problem: string): never {
    throw new SimFailure([problem], this.trace);
  }

  /** 1. The old daemon runs the managed path; returns true when it died part-way. */
  runOldDaemon(): boolean {
    const effects = managedEffects(this.scenario.variant, this.scenario.mode, this.proc.instanceId, this.scenario);
    const applied = Math.min(this.scenario.crashAfter, effects.length);
    for (const effect of effects.slice(0, applied)) {
      effect(this.world, this.proc);
      this.checkHost();
    }
    const crashed = applied < effects.length;
    this.trace.add('M', `managed:${applied}${crashed ? ' crash' : ''}`);
    return crashed;
  }

  /** `<last-good> recover`, as OnFailure or the recovery unit runs it. */
  recover(): void {
    this.recoverRuns += 1;
    if (this.recoverRuns > RECOVER_RUNS_MAX) this.fail('recover loops');
    const finished = runRecoverCommand(this.world, this.scenario, {
      decided: (kind) => this.trace.add('R', `recover:${kind}`),
      applied: () => this.checkHost(),
    });
    if (!finished) this.fail('recover did not finish');
  }

  /** A new daemon process starts (systemd runs the current link in self-hosted mode). */
  startDaemon(): Proc {
    const { world, scenario } = this;
    world.restartScheduled = false;
    for (let attempt = 0; attempt < DAEMON_ATTEMPTS_MAX; attempt += 1) {
      if (scenario.mode === 'self-hosted' && !runs(world, scenario, world.current)) {
        // Crash loop → start limit → OnFailure → `<last-good> recover`, then the unit restarts.
        this.trace.add('L', 'crash-loop');
        this.recover();
        continue;
      }
      if (
        scenario.mode === 'sidecar' &&
        world.agent === null &&
        world.record !== null &&
        !runs(world, scenario, world.current)
      ) {
        // The agent crash-loops while no sidecar holds the lock: the recovery unit gets it.
        this.trace.add('L', 'agent-crash-loop');
        this.recover();
      }
      return freshProc(world, scenario);
    }
    return this.fail('daemon never starts');
  }

  restart(): void {
    this.proc = this.startDaemon();
  }

  /** 3. The startup loop, with injected crashes; returns the steps it took. */
  startupLoop(): number {
    for (let steps = 1; steps <= STARTUP_STEPS_MAX; steps += 1) {
      const d = decideStartup(startupInput(this.world, this.scenario, this.proc));
      this.trace.add('S', `${d.rule}:${d.kind}`);
      if (d.kind === 'open-gate') return steps;
      if (d.kind === 'ignore-own-record') this.fail('unexpected own-record');
      applyStartupDecision(this.world, this, d);
      this.checkHost();
      if (this.scenario.recoveryCrashes.has(steps)) {
        this.trace.add('$', 'crash');
        this.restart();
      }
    }
    return this.fail('no convergence');
  }
}

export function simulate(scenario: Scenario): Outcome {
  const run = new ModelRun(scenario);
  const crashed = run.runOldDaemon();
  // 2. Who runs the startup table next.
  if (crashed) {
    run.restart();
  } else if (scenario.mode === 'self-hosted' && scenario.variant === 'normal') {
    // The old daemon still runs until its scheduled restart; it must leave its own record alone.
    const own = decideStartup(startupInput(run.world, scenario, run.proc));
    if (own.kind !== 'ignore-own-record') run.fail(`the old daemon decided ${own.kind}, not ignore-own-record`);
    run.restart();
  }
  // Otherwise the same daemon continues at the startup table (sidecar row 8, or a failure).
  const steps = run.startupLoop();
  return { world: run.world, steps, trace: run.trace };
}
