/**
 * Property tests of the rollout planner over simulated fleets: random fleets (up to a few
 * thousand machines), random specs and random daemon outcomes, with the planner's actions
 * applied step by step and simulated daemons finishing operations. Every failure names its seed;
 * SIM_SEED=<n> runs one seed alone, ROLLOUT_SEEDS=<n> runs n seeds per property.
 */
import { describe, expect, it } from 'vitest';
import { LABEL_ARCH, LABEL_PURPOSE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng, seedOverride } from '../../sim/harness/index.js';
import { checkInvariants, type Observed } from './invariants.js';
import { quiescent, runRollout } from './run-rollout.js';
import type { RolloutWorld } from './rollout-world.js';
import { randomScenario, type FailureMode } from './scenarios.js';

// SIM_SEED, the harness's one seed variable, runs one seed alone.
const ONLY = seedOverride() ?? undefined;
/** ROLLOUT_SEEDS=<n> runs n seeds per property instead of the default. */
const MANY = process.env['ROLLOUT_SEEDS'];
/** Many seeds take minutes; the default is the normal suite's share. */
// CPU-bound: the bound is for a hang, not a speed target (bench/ measures speed), and holds with a core taken.
const LONG = MANY !== undefined ? 3_600_000 : 120_000;
const seeds = (first: number, count: number): number[] =>
  ONLY !== undefined
    ? [ONLY]
    : Array.from({ length: MANY !== undefined ? Number(MANY) : count }, (_, index) => first + index);

const ALL_MODES: readonly FailureMode[] = [
  'none',
  'some',
  'many',
  'everywhere',
  'arm64',
  'hangs',
  'unreachable',
  'invalid',
];
const MAX_STEPS = 3000;

describe('rollout planner properties', () => {
  it(
    'never exceeds maxInFlight or maxUnavailable, bounds failures per wave, creates nothing after a halt, and replans identically',
    () => {
      const observed: Observed = { worstMargin: Number.NEGATIVE_INFINITY };
      let halted = 0;
      let lost = 0;
      for (const seed of seeds(1000, 40)) {
        const prng = new Prng(seed);
        const { world, description } = randomScenario(seed, prng, ALL_MODES, 2000);
        const lagSteps = prng.chance(0.3) ? prng.between(1, 3) : 0;
        // Now and then a person deletes an operation the controller has already seen.
        const meddling = prng.chance(0.25);
        const deleted = new Set<string>();
        const meddle = (at: RolloutWorld): void => {
          if (!meddling || !prng.chance(0.05)) return;
          const seen = [...at.operations.values()].filter((op) => op.createdStep < at.step - 1);
          if (seen.length === 0) return;
          const victim = prng.pick(seen);
          at.operations.delete(victim.name);
          deleted.add(victim.name);
        };
        const label = `${description}, lag ${lagSteps}${meddling ? ', deletions by hand' : ''}`;
        const result = runRollout(world, {
          maxSteps: MAX_STEPS,
          approve: true,
          determinism: world.nodes.size <= 300,
          lagSteps,
          label,
          meddle,
          check: (at) => checkInvariants(at, label, observed),
        });
        expect(quiescent(world, result.status), `${label}: did not settle in ${MAX_STEPS} steps`).toBe(true);
        const recreated = world.creates.filter(
          (create, index) => world.creates.findIndex((c) => c.name === create.name) !== index,
        );
        expect(
          JSON.stringify(
            recreated.map((c) => [
              c.name,
              c.wave,
              c.step,
              [...deleted].includes(c.name),
              world.creates.find((x) => x.name === c.name),
            ]),
          ),
          `${label}: operations created twice`,
        ).toEqual('[]');
        if (deleted.size > 0) lost += 1;
        if (result.haltStep !== null) halted += 1;
      }
      // Some runs must halt for the bounds to mean anything.
      console.log(
        `${halted} runs halted, ${lost} with deletions by hand; the largest failure overshoot was ${observed.worstMargin}`,
      );
      if (ONLY === undefined) {
        expect(halted).toBeGreaterThan(5);
        expect(observed.worstMargin).toBeLessThanOrEqual(0);
      }
    },
    LONG,
  );

  it(
    'stops a release that fails everywhere in the canary wave',
    () => {
      for (const seed of seeds(2000, 24)) {
        const prng = new Prng(seed);
        const { world, description } = randomScenario(seed, prng, ['everywhere']);
        const canary = (world.spec['strategy'] as { waves: { name: string; failureBudget?: unknown }[] }).waves[0];
        if (canary !== undefined) delete canary.failureBudget; // the default: a canary tolerates nothing
        const result = runRollout(world, { maxSteps: MAX_STEPS, approve: true, label: description });
        expect(result.status.halt?.reason, description).toBe('FailureBudgetExceeded');
        expect(result.status.halt?.wave, description).toBe('canary');
        const waves = new Set(world.creates.filter((c) => c.purpose === 'upgrade').map((c) => c.wave));
        expect([...waves], description).toEqual(['canary']);
        expect(result.status.counts.succeeded, description).toBe(0);
      }
    },
    LONG,
  );

  it(
    'halts a release that fails only on arm64 and names the architecture',
    () => {
      for (const seed of seeds(3000, 24)) {
        const prng = new Prng(seed);
        const { world, description } = randomScenario(seed, prng, ['arm64']);
        for (const [name, node] of world.nodes) {
          // At least a tenth of the fleet, and at least one machine, is arm64.
          const arm64 = prng.chance(0.25) || name.endsWith('00000');
          world.nodes.set(name, { ...node, labels: { ...node.labels, [LABEL_ARCH]: arm64 ? 'arm64' : 'amd64' } });
        }
        const strategy = world.spec['strategy'] as { waves: Record<string, unknown>[] };
        for (const wave of strategy.waves) delete wave['failureBudget'];
        const result = runRollout(world, { maxSteps: MAX_STEPS, approve: true, label: description });
        const { byLabel } = result.status.failures;
        expect(result.status.halt, description).toBeDefined();
        expect(byLabel[`${LABEL_ARCH}=arm64`], description).toBeGreaterThan(0);
        expect(byLabel[`${LABEL_ARCH}=amd64`], description).toBeUndefined();
        const failedArch = [...world.operations.values()]
          .filter((op) => op.phase === 'Failed' && op.labels[LABEL_PURPOSE] === 'upgrade')
          .map((op) => world.nodes.get(op.machineRef)?.labels[LABEL_ARCH]);
        expect(new Set(failedArch), description).toEqual(new Set(['arm64']));
      }
    },
    LONG,
  );
});
