import type { Prng } from '../../sim/harness/prng.js';
import type { SlotName } from '../../../src/domain/node/layout/slot.js';
import type { Scenario, Variant } from './model-world.js';

// The start states and crash points the recovery convergence model is run over.

const VARIANTS: readonly Variant[] = ['normal', 'exec-failure-after-switch', 'restart-scheduling-failed'];
/** Durable effects of the managed path per variant (model-effects.ts). */
const EFFECTS_COUNT: Record<Variant, number> = {
  normal: 8,
  'exec-failure-after-switch': 8,
  'restart-scheduling-failed': 8,
};
/** Startup steps a crash may follow in the exhaustive enumeration (every run converges well within). */
const CRASH_STEPS_MAX = 12;

/** Every start state, without the recovery crashes. */
function startStates(): Omit<Scenario, 'recoveryCrashes'>[] {
  const all: Omit<Scenario, 'recoveryCrashes'>[] = [];
  for (const variant of VARIANTS) {
    for (let crashAfter = 0; crashAfter <= EFFECTS_COUNT[variant]; crashAfter += 1) {
      for (const mode of ['self-hosted', 'sidecar'] as const) {
        for (const behaviour of ['good', 'unhealthy', 'crashing'] as const) {
          for (const machine of [true, false]) {
            for (const syncBroken of machine ? [false, true] : [false]) {
              for (const lastGoodInitial of ['blue', 'green'] as const satisfies readonly SlotName[]) {
                const effects = crashAfter === EFFECTS_COUNT[variant] ? Infinity : crashAfter;
                all.push({ variant, crashAfter: effects, mode, behaviour, machine, syncBroken, lastGoodInitial });
              }
            }
          }
        }
      }
    }
  }
  return all;
}

/** Every start state × no crash, one or two crashes after any of the first 12 startup steps. */
export function exhaustiveScenarios(): Scenario[] {
  const crashSets: ReadonlySet<number>[] = [new Set()];
  for (let i = 1; i <= CRASH_STEPS_MAX; i += 1) {
    crashSets.push(new Set([i]));
    for (let j = i + 1; j <= CRASH_STEPS_MAX; j += 1) crashSets.push(new Set([i, j]));
  }
  return startStates().flatMap((state) => crashSets.map((recoveryCrashes) => ({ ...state, recoveryCrashes })));
}

/**
 * A seeded start state with `crashes` recovery crashes after random steps among the first
 * `withinSteps` (beyond the exhaustive bound of two).
 */
export function randomScenario(prng: Prng, crashes: number, withinSteps: number): Scenario {
  const state = prng.pick(startStates());
  const recoveryCrashes = new Set<number>();
  while (recoveryCrashes.size < crashes) recoveryCrashes.add(prng.between(1, withinSteps));
  return { ...state, recoveryCrashes };
}

export function expectedPhase(s: Scenario): 'Complete' | 'Failed' | null {
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

/** The scenario as JSON (its crash set as a list). */
export function describeScenario(scenario: Scenario): string {
  return JSON.stringify({ ...scenario, recoveryCrashes: [...scenario.recoveryCrashes] });
}
