/**
 * Convergence: a tiny pure interpreter plays the app (recovery-model/). It runs the managed path
 * (the old daemon) with a crash after every prefix of its durable effects, then runs the policy's
 * decisions one at a time against a model host, with crashes injected after any one or two
 * recovery steps (exhaustive), and after three to six (seeded: `SIM_SEED` replays one draw).
 * Every run must reach `open-gate` within a bound, publish exactly one distinct terminal status,
 * and leave the host in the state I7 / I12 require (recovery-model/model-checkers.ts). A failure
 * prints the run's trace and the line that replays its test.
 */
import { describe, expect, it } from 'vitest';
import { problemsOf, SimFailure } from '../sim/harness/failure.js';
import { Prng } from '../sim/harness/prng.js';
import { currentReplayCommand } from '../sim/harness/replay.js';
import { formatSeed, seedFromEnv } from '../sim/harness/seed.js';
import { CONVERGENCE_CHECKERS, type ConvergedRun } from './recovery-model/model-checkers.js';
import { simulate } from './recovery-model/model-run.js';
import { describeScenario, exhaustiveScenarios, randomScenario } from './recovery-model/model-scenarios.js';
import type { Scenario } from './recovery-model/model-world.js';

/** Startup steps a run with up to two recovery crashes may take. */
const STEPS_MAX = 20;
/** Each extra crash restarts a daemon, which may repeat the steps since the last durable one. */
const STEPS_PER_EXTRA_CRASH = 10;
const RANDOM_RUNS = 3_000;
const RANDOM_CRASHES_MIN = 3;
const RANDOM_CRASHES_MAX = 6;
const RANDOM_CRASH_WITHIN_STEPS = 20;
const DEFAULT_SEED = 0x5eed_c0de;

/** Runs the scenario and the checkers; returns the failure report, or null when every check holds. */
function failureOf(scenario: Scenario, stepsMax: number, seed?: number): string | null {
  let run: ConvergedRun;
  try {
    run = { scenario, outcome: simulate(scenario), stepsMax };
  } catch (error) {
    if (!(error instanceof SimFailure)) throw error;
    return `${error.message}\n${describeScenario(scenario)}\nreplay: ${currentReplayCommand(seed)}`;
  }
  const problems = problemsOf(run, CONVERGENCE_CHECKERS);
  if (problems.length === 0) return null;
  const { outcome } = run;
  return `${problems.join('; ')}\n${describeScenario(scenario)}\n${outcome.trace.format()}\n${JSON.stringify(outcome.world)}\nreplay: ${currentReplayCommand(seed)}`;
}

describe('RecoveryPolicy convergence (model interpreter)', () => {
  const all = exhaustiveScenarios();

  it(`every start state and crash point converges to open-gate (${all.length} runs)`, () => {
    let runsChecked = 0;
    for (const scenario of all) {
      const failure = failureOf(scenario, STEPS_MAX);
      if (failure !== null) expect.fail(failure);
      runsChecked += 1;
    }
    expect(runsChecked).toBe(all.length);
  });

  it(`${RANDOM_RUNS} seeded start states with ${RANDOM_CRASHES_MIN}–${RANDOM_CRASHES_MAX} recovery crashes converge too`, () => {
    const seed = seedFromEnv(DEFAULT_SEED);
    const prng = new Prng(seed);
    for (let index = 0; index < RANDOM_RUNS; index += 1) {
      const crashes = prng.between(RANDOM_CRASHES_MIN, RANDOM_CRASHES_MAX);
      const scenario = randomScenario(prng, crashes, RANDOM_CRASH_WITHIN_STEPS);
      const stepsMax = STEPS_MAX + STEPS_PER_EXTRA_CRASH * (crashes - 2);
      const failure = failureOf(scenario, stepsMax, seed);
      if (failure !== null) expect.fail(`seed ${formatSeed(seed)}, run ${index}: ${failure}`);
    }
  });

  it('the self-hosted S5 path runs in the documented order', () => {
    const trace = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'self-hosted',
      behaviour: 'unhealthy',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    }).trace;
    expect(trace.texts()).toEqual([
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
    const trace = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'self-hosted',
      behaviour: 'good',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    }).trace;
    expect(trace.texts()).toEqual([
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
    const trace = simulate({
      variant: 'normal',
      crashAfter: Infinity,
      mode: 'sidecar',
      behaviour: 'crashing',
      machine: true,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    }).trace;
    expect(trace.texts()).toEqual([
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
    const trace = simulate({
      variant: 'normal',
      crashAfter: 7,
      mode: 'sidecar',
      behaviour: 'good',
      machine: false,
      syncBroken: false,
      lastGoodInitial: 'blue',
      recoveryCrashes: new Set(),
    }).trace;
    expect(trace.texts()).toEqual([
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
    expect(trace.texts()).toEqual([
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
