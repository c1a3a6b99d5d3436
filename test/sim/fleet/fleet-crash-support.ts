/** Crash runs: the same plan run uninterrupted, then with controller kills at random effects. */
import { Prng } from '../harness/index.js';
import type { KillPlan } from './crashable-ports.js';
import { fleetOf, fleetSpec, type FailureMode } from './fleet-scenarios.js';
import { NO_FAULTS, runFleet, type RunPlan, type RunResult } from './fleet-run.js';
import { HOUR_MS, report, SEED, SIZE } from './fleet-support.js';

export const CRASHES = 100;

export interface CrashScenario {
  readonly failures: FailureMode;
  readonly onFailure: 'Halt' | 'RollBackAll';
  /** The failure budget of every wave after the canary. */
  readonly budget: string;
}

export function crashPlan(scenario: CrashScenario, size: number, kills?: readonly KillPlan[]): RunPlan {
  const spec = fleetSpec();
  const base = spec['strategy'] as { waves: Record<string, unknown>[] };
  // The canary tolerates the odd failure; a later wave's 1% budget is what one in thirty exceeds.
  const waves = base.waves.map((wave, index) => ({ ...wave, failureBudget: index === 0 ? 2 : scenario.budget }));
  return {
    seed: SEED,
    machines: fleetOf(size, SEED),
    failures: scenario.failures,
    rollouts: [{ name: 'fleet', spec: { ...spec, strategy: { ...base, waves, onFailure: scenario.onFailure } } }],
    faults: NO_FAULTS,
    limitMs: 12 * HOUR_MS,
    ...(kills === undefined ? {} : { kills }),
  };
}

/**
 * `count` distinct effect numbers, each killed before or after its effect, among the first 60% of
 * the uninterrupted run's effects: a crashed run may take fewer effects (a restart merges two
 * plans into one; a halt may come a moment sooner), and every planned kill must still happen.
 */
export function killPlan(prng: Prng, effects: number, count: number): KillPlan[] {
  const range = Math.floor(effects * 0.6);
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, range)) chosen.add(1 + prng.int(range));
  return [...chosen].sort((a, b) => a - b).map((atWrite) => ({ atWrite, when: prng.chance(0.5) ? 'before' : 'after' }));
}

export async function runWithAndWithoutCrashes(
  scenario: CrashScenario,
  size = SIZE,
): Promise<{ uninterrupted: RunResult; crashed: RunResult; effects: number }> {
  const uninterrupted = await runFleet(crashPlan(scenario, size));
  report(uninterrupted, `${scenario.onFailure}, uninterrupted`);
  const effects = uninterrupted.world.counter.count;
  const crashed = await runFleet(crashPlan(scenario, size, killPlan(new Prng(SEED + 100), effects, CRASHES)));
  report(crashed, `${scenario.onFailure}, ${CRASHES} crashes`);
  return { uninterrupted, crashed, effects };
}
