import { withCompleted } from '../../src/domain/upgrade-record.js';
import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/digest.js';
import { decideRecoverCommand } from '../../src/domain/recovery/recover-policy.js';
import { decideStartup } from '../../src/domain/recovery/startup-policy.js';
import {
  NO_PROGRESS,
  type AgentMode,
  type CandidateHealth,
  type ContainerVerdict,
  type RunProgress,
  type StartupDecision,
  type TerminalOutcome,
} from '../../src/domain/recovery/vocabulary.js';
import type { SlotName } from '../../src/domain/slot.js';
import {
  newUpgradeRecord,
  withCandidate,
  withCandidateDigest,
  withFailure,
  withSwitchCommitted,
  type UpgradeRecord,
} from '../../src/domain/upgrade-record.js';

/**
 * Convergence: a tiny pure interpreter plays the app. It runs the managed path (the old daemon)
 * with a crash after every prefix of its durable effects, then runs the policy's decisions one
 * at a time against a model host, with crashes injected after any one or two recovery effects.
 * Every run must reach `open-gate` within a bound, publish exactly one distinct terminal
 * status, and leave the host in the state I7 / I12 require.
 */

type Binary = 'v0' | 'v1' | 'v2'; // v0: an older release, v1: the running release, v2: the candidate
type Behaviour = 'good' | 'unhealthy' | 'crashing';
type Variant = 'normal' | 'exec-failure-after-switch' | 'restart-scheduling-failed';

const DIGEST = 'c'.repeat(64) as Sha256;
const CANDIDATE: SlotName = 'green';
const PREVIOUS: SlotName = 'blue';

interface Scenario {
  readonly variant: Variant;
  readonly crashAfter: number; // managed-path effects applied before the old daemon dies (Infinity: none)
  readonly mode: AgentMode;
  readonly behaviour: Behaviour;
  readonly machine: boolean;
  readonly syncBroken: boolean;
  readonly lastGoodInitial: SlotName;
  readonly recoveryCrashes: ReadonlySet<number>;
}

interface World {
  record: UpgradeRecord | null;
  slots: Record<SlotName, Binary>;
  current: SlotName;
  lastGood: SlotName;
  nspawn: Binary | null;
  agent: SlotName | null;
  quarantine: Sha256[];
  stateCommitted: boolean;
  publishes: TerminalOutcome[];
  /** Store writes that changed something (publishing the same status again is a no-op). */
  storeWrites: TerminalOutcome[];
  restartScheduled: boolean;
}

interface Proc {
  instanceId: string;
  self: SlotName | null;
  health: CandidateHealth;
  container: ContainerVerdict;
  progress: RunProgress;
}

let instanceCounter = 0;
function newInstanceId(): string {
  instanceCounter += 1;
  return instanceCounter.toString(16).padStart(32, '0');
}

function runs(world: World, scenario: Scenario, slot: SlotName): boolean {
  return !(world.slots[slot] === 'v2' && scenario.behaviour === 'crashing');
}

function healthOf(world: World, scenario: Scenario, proc: Proc, slot: SlotName): CandidateHealth {
  const running = scenario.mode === 'self-hosted' ? proc.self : world.agent;
  if (running !== slot) return 'unhealthy';
  return world.slots[slot] === 'v2' && scenario.behaviour !== 'good' ? 'unhealthy' : 'healthy';
}

function freshProc(world: World, scenario: Scenario, instanceId = newInstanceId()): Proc {
  return {
    instanceId,
    self: scenario.mode === 'self-hosted' ? world.current : null,
    health: 'unknown',
    container: scenario.machine ? 'unknown' : 'not-applicable',
    progress: NO_PROGRESS,
  };
}

function created(instanceId: string): UpgradeRecord {
  const result = newUpgradeRecord({
    operationName: 'upgrade-1',
    operationUid: null,
    instanceId,
    activeMachine: 'kube1',
  });
  if (!result.ok) throw new Error(result.failure.message);
  return result.value;
}

function must(record: UpgradeRecord | null): UpgradeRecord {
  if (record === null) throw new Error('model: no record');
  return record;
}

/** The old daemon's durable effects (docs/protocol.md#managed-path-rows-1-8), in order. */
function managedEffects(
  variant: Variant,
  mode: AgentMode,
  oldId: string,
  scenario: Scenario,
): Array<(w: World, p: Proc) => void> {
  const head: Array<(w: World, p: Proc) => void> = [
    (w) => {
      w.record = created(oldId);
    }, // row 3
    (w) => {
      w.record = withCandidate(must(w.record), CANDIDATE, PREVIOUS);
    }, // row 5
    (w) => {
      w.lastGood = PREVIOUS;
    }, // row 6: protect last-good
    (w) => {
      w.slots[CANDIDATE] = 'v2';
    }, // row 6: install
    (w) => {
      w.record = withCandidateDigest(must(w.record), DIGEST);
    },
    (w) => {
      w.current = CANDIDATE;
    }, // row 7: switch
  ];
  switch (variant) {
    case 'normal':
      return [
        ...head,
        (w) => {
          w.record = withSwitchCommitted(must(w.record));
        },
        (w, p) => {
          // row 8
          if (mode === 'self-hosted') w.restartScheduled = true;
          else {
            w.agent = runs(w, scenario, w.current) ? w.current : null;
            p.progress = { ...p.progress, restartedInto: w.current };
          }
        },
      ];
    case 'exec-failure-after-switch': // row 7 fails after the switch: roll back, record ExecutionFailed, publish fails
      return [
        ...head,
        (w) => {
          w.current = PREVIOUS;
        },
        (w) => {
          w.record = withFailure(
            must(w.record),
            { reason: 'ExecutionFailed', code: 'E_IO', message: 'recording the switch failed' },
            false,
          );
        },
      ];
    case 'restart-scheduling-failed': // row 8 fails: record failure + recoveryRequired, then the startup table
      return [
        ...head,
        (w) => {
          w.record = withSwitchCommitted(must(w.record));
        },
        (w) => {
          w.record = withFailure(
            must(w.record),
            { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'scheduling the restart failed' },
            true,
          );
        },
      ];
  }
}

interface Outcome {
  readonly world: World;
  readonly steps: number;
  readonly trace: string[];
}

function simulate(scenario: Scenario): Outcome {
  const world: World = {
    record: null,
    slots: { blue: 'v1', green: 'v0' },
    current: PREVIOUS,
    lastGood: scenario.lastGoodInitial,
    nspawn: scenario.machine ? 'v1' : null,
    agent: scenario.mode === 'sidecar' ? PREVIOUS : null,
    quarantine: [],
    stateCommitted: false,
    publishes: [],
    storeWrites: [],
    restartScheduled: false,
  };
  const trace: string[] = [];
  const checkHost = (): void => {
    // I2: the older release is never made current; I1: current always runs something.
    if (world.slots[world.current] === 'v0') throw new Error(`downgrade: ${trace.join(' → ')}`);
  };

  // 1. The old daemon runs the managed path and possibly dies part-way.
  const oldId = newInstanceId();
  let proc = freshProc(world, scenario, oldId);
  const effects = managedEffects(scenario.variant, scenario.mode, oldId, scenario);
  const applied = Math.min(scenario.crashAfter, effects.length);
  for (const effect of effects.slice(0, applied)) {
    effect(world, proc);
    checkHost();
  }
  const crashed = applied < effects.length;
  trace.push(`managed:${applied}${crashed ? ' crash' : ''}`);

  // 2. Who runs the startup table next.
  let recoverRuns = 0;
  const recover = (): void => {
    recoverRuns += 1;
    if (recoverRuns > 5) throw new Error(`recover loops: ${trace.join(' → ')}`);
    let progress = { containerCopiedFrom: null as SlotName | null, agentRestarted: false };
    for (let i = 0; i < 10; i += 1) {
      const d = decideRecoverCommand({
        record: world.record,
        message: '',
        observed: { current: world.current, lastGood: world.lastGood, container: 'unknown' },
        progress,
      });
      trace.push(`recover:${d.kind}`);
      switch (d.kind) {
        case 'done':
          return;
        case 'record-failure':
          world.record = withFailure(must(world.record), d.failure, d.recoveryRequired);
          break;
        case 'roll-back':
          world.lastGood = d.to;
          world.current = d.to;
          break;
        case 'restore-container':
          if (world.nspawn !== null) world.nspawn = world.slots[d.from];
          progress = { ...progress, containerCopiedFrom: d.from };
          break;
        case 'restart-agent':
          if (scenario.mode === 'sidecar') world.agent = runs(world, scenario, world.current) ? world.current : null;
          progress = { ...progress, agentRestarted: true };
          break;
      }
      checkHost();
    }
    throw new Error(`recover did not finish: ${trace.join(' → ')}`);
  };
  /** A new daemon process starts (systemd runs the current link in self-hosted mode). */
  const startDaemon = (): Proc => {
    world.restartScheduled = false;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      if (scenario.mode === 'self-hosted' && !runs(world, scenario, world.current)) {
        // Crash loop → start limit → OnFailure → `<last-good> recover`, then the unit restarts.
        trace.push('crash-loop');
        recover();
        continue;
      }
      if (
        scenario.mode === 'sidecar' &&
        world.agent === null &&
        world.record !== null &&
        !runs(world, scenario, world.current)
      ) {
        // The agent crash-loops while no sidecar holds the lock: the recovery unit gets it.
        trace.push('agent-crash-loop');
        recover();
      }
      return freshProc(world, scenario);
    }
    throw new Error(`daemon never starts: ${trace.join(' → ')}`);
  };

  if (crashed) {
    proc = startDaemon();
  } else if (scenario.mode === 'self-hosted' && scenario.variant === 'normal') {
    // The old daemon still runs until its scheduled restart; it must leave its own record alone.
    const own = decideStartup(input(world, scenario, proc));
    expect(own.kind).toBe('ignore-own-record');
    proc = startDaemon();
  }
  // Otherwise the same daemon continues at the startup table (sidecar row 8, or a failure).

  // 3. The startup loop, with injected crashes.
  let steps = 0;
  for (;;) {
    steps += 1;
    if (steps > 60) throw new Error(`no convergence: ${trace.join(' → ')}`);
    const d = decideStartup(input(world, scenario, proc));
    trace.push(`${d.rule}:${d.kind}`);
    if (d.kind === 'open-gate') break;
    if (d.kind === 'ignore-own-record') throw new Error(`unexpected own-record: ${trace.join(' → ')}`);
    apply(
      world,
      scenario,
      proc,
      d,
      () => {
        proc = startDaemon();
      },
      (p) => {
        proc = p;
      },
    );
    checkHost();
    if (scenario.recoveryCrashes.has(steps)) {
      trace.push('crash');
      proc = startDaemon();
    }
  }
  return { world, steps, trace };
}

function input(world: World, scenario: Scenario, proc: Proc) {
  return {
    record: world.record,
    mode: scenario.mode,
    instanceId: proc.instanceId,
    observed: {
      current: world.current,
      lastGood: world.lastGood,
      self: proc.self,
      agent: world.agent,
      candidateHealth: proc.health,
      container: proc.container,
      quarantined: world.quarantine.includes(DIGEST),
      stateCommitted: world.stateCommitted,
    },
    progress: proc.progress,
  };
}

function apply(
  world: World,
  scenario: Scenario,
  proc: Proc,
  d: StartupDecision,
  restart: () => void,
  replace: (p: Proc) => void,
): void {
  const invalidateContainer = (): void => {
    if (scenario.machine) proc.container = 'unknown';
  };
  switch (d.kind) {
    case 'record-failure':
      world.record = withFailure(must(world.record), d.failure, d.recoveryRequired);
      return;
    case 'measure-health':
      proc.health = healthOf(world, scenario, proc, d.slot);
      return;
    case 'sync-container':
      if (world.nspawn !== null && !scenario.syncBroken) world.nspawn = world.slots[d.from];
      proc.progress = { ...proc.progress, containerCopiedFrom: d.from };
      invalidateContainer();
      return;
    case 'check-container':
      proc.container =
        world.nspawn === null ? 'not-applicable' : world.nspawn === world.slots[world.current] ? 'equal' : 'differs';
      return;
    case 'commit-state':
      world.stateCommitted = true;
      return;
    case 'record-completion':
      if (world.record === null) throw new Error('record-completion without a record');
      world.record = withCompleted(world.record);
      return;
    case 'roll-back':
      world.lastGood = d.to;
      world.current = d.to;
      invalidateContainer();
      return;
    case 'restore-container':
      if (world.nspawn !== null) world.nspawn = world.slots[d.from];
      proc.progress = { ...proc.progress, containerCopiedFrom: d.from };
      invalidateContainer();
      return;
    case 'restart-into-last-good':
      world.restartScheduled = true;
      proc.progress = { ...proc.progress, restartedInto: world.current };
      return;
    case 'restart-agent':
      world.agent = runs(world, scenario, world.current) ? world.current : null;
      proc.progress = { ...proc.progress, restartedInto: d.into };
      return;
    case 'wait':
      if (!world.restartScheduled) throw new Error('waiting for a restart that was never scheduled');
      restart(); // the scheduled restart fires
      return;
    case 'quarantine':
      if (!world.quarantine.includes(d.digest)) world.quarantine.push(d.digest);
      return;
    case 'publish': {
      if (d.status.phase === 'Complete' && world.nspawn !== null && world.nspawn !== world.slots[world.current])
        throw new Error('I7: Complete with nspawn out of sync');
      world.publishes.push(d.status);
      const last = world.storeWrites.at(-1);
      if (last === undefined || JSON.stringify(last) !== JSON.stringify(d.status)) world.storeWrites.push(d.status);
      proc.progress = { ...proc.progress, published: true };
      return;
    }
    case 'delete-record':
      world.record = null;
      replace({
        ...proc,
        progress: NO_PROGRESS,
        health: 'unknown',
        container: scenario.machine ? 'unknown' : 'not-applicable',
      });
      return;
    case 'open-gate':
    case 'ignore-own-record':
      return;
  }
}

function scenarios(): Scenario[] {
  const all: Scenario[] = [];
  const crashSets: Array<ReadonlySet<number>> = [new Set()];
  for (let i = 1; i <= 12; i += 1) {
    crashSets.push(new Set([i]));
    for (let j = i + 1; j <= 12; j += 1) crashSets.push(new Set([i, j]));
  }
  const lengths: Record<Variant, number> = {
    normal: 8,
    'exec-failure-after-switch': 8,
    'restart-scheduling-failed': 8,
  };
  for (const variant of ['normal', 'exec-failure-after-switch', 'restart-scheduling-failed'] as const) {
    for (let crashAfter = 0; crashAfter <= lengths[variant]; crashAfter += 1) {
      for (const mode of ['self-hosted', 'sidecar'] as const) {
        for (const behaviour of ['good', 'unhealthy', 'crashing'] as const) {
          for (const machine of [true, false]) {
            for (const syncBroken of machine ? [false, true] : [false]) {
              for (const lastGoodInitial of ['blue', 'green'] as const) {
                for (const recoveryCrashes of crashSets) {
                  all.push({
                    variant,
                    crashAfter: crashAfter === lengths[variant] ? Infinity : crashAfter,
                    mode,
                    behaviour,
                    machine,
                    syncBroken,
                    lastGoodInitial,
                    recoveryCrashes,
                  });
                }
              }
            }
          }
        }
      }
    }
  }
  return all;
}

function expectedPhase(s: Scenario): 'Complete' | 'Failed' | null {
  if (s.crashAfter === 0) return null; // no record was ever written: nothing to publish
  // The candidate is current and no failure is recorded when the old daemon stops: it gets its
  // chance (S4) however it got there — unlike the reference, which always rolled back here.
  const candidateLeftCurrent =
    s.crashAfter >= 6 &&
    (s.variant === 'normal' ||
      (s.variant === 'exec-failure-after-switch' && s.crashAfter === 6) ||
      (s.variant === 'restart-scheduling-failed' && s.crashAfter <= 7));
  return candidateLeftCurrent && s.behaviour === 'good' && !s.syncBroken ? 'Complete' : 'Failed';
}

describe('RecoveryPolicy convergence (model interpreter)', () => {
  const all = scenarios();

  it(`every start state and crash point converges to open-gate (${all.length} runs)`, () => {
    let runsChecked = 0;
    for (const scenario of all) {
      const { world, steps, trace } = simulate(scenario);
      const check = (condition: boolean, what: string): void => {
        if (condition) return;
        const shown = { ...scenario, recoveryCrashes: [...scenario.recoveryCrashes] };
        throw new Error(`${what}\n${JSON.stringify(shown)}\n${trace.join(' → ')}\n${JSON.stringify(world)}`);
      };
      check(steps <= 20, `bounded: ${steps} steps`);
      check(world.record === null, 'the record is gone');

      // I5: exactly one terminal status per operation (a repeated publish is the same status).
      const phase = expectedPhase(scenario);
      if (phase === null) {
        check(world.publishes.length === 0, 'nothing to publish without a record');
        runsChecked += 1;
        continue;
      }
      check(world.storeWrites.length === 1, 'exactly one distinct terminal status');
      const status = world.storeWrites[0];
      check(status?.phase === phase, `phase ${phase}`);

      if (phase === 'Complete') {
        // I7 and the committed state: current is the healthy candidate, nspawn equal.
        check(world.current === CANDIDATE && world.slots[world.current] === 'v2', 'current is the candidate');
        check(!scenario.machine || world.nspawn === 'v2', 'I7: nspawn equals the host binary');
        check(world.stateCommitted, 'state committed');
        check(world.quarantine.length === 0, 'a good candidate is not quarantined');
      } else {
        // I12: current is the previous binary (never the older v0, never the failed candidate).
        check(world.slots[world.current] === 'v1', 'I12: current is the previous binary');
        check(!scenario.machine || world.nspawn === 'v1', 'nspawn is the previous binary');
        const execFailed = scenario.variant === 'exec-failure-after-switch' && scenario.crashAfter > 7;
        check(status?.reason === (execFailed ? 'ExecutionFailed' : 'DaemonFailed'), 'the recorded reason is published');
        // A failure before the switch never quarantines; a candidate that ran and failed is.
        if (scenario.crashAfter < 6) check(world.quarantine.length === 0, 'no quarantine before the switch');
        if (scenario.variant === 'normal' && scenario.crashAfter >= 6 && scenario.behaviour !== 'good')
          check(world.quarantine.length === 1 && world.quarantine[0] === DIGEST, 'failed candidate quarantined');
      }
      runsChecked += 1;
    }
    expect(runsChecked).toBe(all.length);
  });

  it('the self-hosted S5 path runs in the documented order', () => {
    const { trace } = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'self-hosted',
      behaviour: 'unhealthy',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    });
    expect(trace).toEqual([
      'managed:8',
      'S4:measure-health',
      'S5:record-failure',
      'S6:roll-back',
      'S6:restore-container',
      'S7:restart-into-last-good',
      'S7:wait',
      // The last-good daemon copies nspawn ← last-good once more: it trusts no earlier process.
      'S6:restore-container',
      'S8:quarantine',
      'S8:publish',
      'S8:delete-record',
      'S1:open-gate',
    ]);
  });

  it('the self-hosted S4 path runs in the documented order', () => {
    const { trace } = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'self-hosted',
      behaviour: 'good',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    });
    expect(trace).toEqual([
      'managed:8',
      'S4:measure-health',
      'S4:sync-container',
      'S4:check-container',
      'S4:commit-state',
      'S4:record-completion',
      'S4:publish',
      'S4:delete-record',
      'S1:open-gate',
    ]);
  });

  it('the sidecar S5 path runs in the documented order', () => {
    const { trace } = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'sidecar',
      behaviour: 'crashing',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    });
    expect(trace).toEqual([
      'managed:8',
      'S4:measure-health',
      'S5:record-failure',
      'S6:roll-back',
      'S6:restore-container',
      'S7:restart-agent',
      'S8:quarantine',
      'S8:publish',
      'S8:delete-record',
      'S1:open-gate',
    ]);
  });

  it('a sidecar that died between the switch and restarting the agent restarts it into the candidate', () => {
    const { trace } = simulate({
      variant: 'normal',
      crashAfter: 7,
      mode: 'sidecar',
      behaviour: 'good',
      machine: false,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    });
    expect(trace).toEqual([
      'managed:7 crash',
      'S4:restart-agent',
      'S4:measure-health',
      'S4:commit-state',
      'S4:record-completion',
      'S4:publish',
      'S4:delete-record',
      'S1:open-gate',
    ]);
  });

  it('a crash-looping self-hosted candidate is recovered by `recover`, and last-good publishes', () => {
    const { trace, world } = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'self-hosted',
      behaviour: 'crashing',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'green',
      recoveryCrashes: new Set(),
    });
    expect(trace).toEqual([
      'managed:8',
      'crash-loop',
      'recover:record-failure',
      'recover:roll-back',
      'recover:restore-container',
      'recover:restart-agent',
      'recover:done',
      'S6:restore-container',
      'S8:quarantine',
      'S8:publish',
      'S8:delete-record',
      'S1:open-gate',
    ]);
    expect(world.storeWrites).toEqual([{ phase: 'Failed', reason: 'DaemonFailed', message: expect.any(String) }]);
  });
});
