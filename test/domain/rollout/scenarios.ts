/** Random rollouts for the property tests: fleets, specs and what the daemons will do. */
import { LABEL_ARCH } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import type { Prng } from '../../sim/harness/index.js';
import { baseSpec, makeNodes, releases, type FleetShape } from './fixtures.js';
import { RolloutWorld, type Behaviour, type Outcome } from './rollout-world.js';

export type FailureMode = 'none' | 'some' | 'many' | 'everywhere' | 'arm64' | 'hangs' | 'unreachable' | 'invalid';

export interface Scenario {
  readonly world: RolloutWorld;
  readonly mode: FailureMode;
  readonly description: string;
}

export function randomFleetShape(prng: Prng, largest = 3000): FleetShape {
  const size = prng.weighted<() => number>([
    [() => prng.between(3, 60), 4],
    [() => prng.between(60, 400), 4],
    [() => prng.between(400, largest), 1],
  ])();
  return { size, arm64: prng.pick([0, 0.1, 0.3, 0.5]), zones: prng.between(1, 5) };
}

const amount = (prng: Prng, maxCount: number, maxPercent: number): number | string =>
  prng.chance(0.5) ? prng.between(1, maxCount) : `${prng.between(1, maxPercent)}%`;

/** Big fleets get percentage slots in their percent waves, so a run takes hundreds of steps, not thousands. */
export function randomWaves(prng: Prng, manual: boolean, large: boolean): Record<string, unknown>[] {
  const first: Record<string, unknown> = prng.chance(0.5)
    ? { name: 'canary', count: prng.between(1, 5) }
    : { name: 'canary', percent: prng.between(1, 10) };
  const waves = [first];
  let percent = typeof first['percent'] === 'number' ? first['percent'] : 0;
  for (let index = prng.between(0, 2); index > 0; index -= 1) {
    percent = prng.between(percent + 1, Math.min(95, percent + 40));
    waves.push({ name: `wave-${waves.length}`, percent });
  }
  waves.push({ name: 'rest', percent: 100 });
  return waves.map((wave) => ({
    ...wave,
    ...(large && 'percent' in wave
      ? { maxInFlight: `${prng.between(5, 50)}%` }
      : prng.chance(0.7) && { maxInFlight: amount(prng, 10, 50) }),
    ...(prng.chance(0.5) && { failureBudget: prng.chance(0.5) ? prng.between(0, 3) : `${prng.between(0, 10)}%` }),
    ...(prng.chance(0.3) && { bake: prng.pick(['20s', '1m']) }),
    ...(manual && prng.chance(0.3) && { gate: 'Manual' }),
  }));
}

export function randomStrategy(prng: Prng, large: boolean): Record<string, unknown> {
  return {
    waves: randomWaves(prng, prng.chance(0.3), large),
    ...(prng.chance(0.5) && { maxUnavailable: large ? `${prng.between(5, 30)}%` : amount(prng, 20, 30) }),
    operationTimeout: '5m',
    onFailure: prng.pick(['Halt', 'RollBackWave', 'RollBackAll']),
    quarantineOnHalt: prng.chance(0.5),
  };
}

/** What the daemon of each forward operation will do; rollback operations nearly always succeed. */
export function behaviourFor(mode: FailureMode): Behaviour {
  return (node, purpose, prng): Outcome => {
    if (purpose === 'rollback') return prng.chance(0.02) ? 'DaemonFailed' : 'succeed';
    const reason = (): Outcome => (prng.chance(0.5) ? 'DaemonFailed' : 'ExecutionFailed');
    switch (mode) {
      case 'none':
        return 'succeed';
      case 'some':
        return prng.chance(0.02) ? reason() : 'succeed';
      case 'many':
        return prng.chance(0.15) ? reason() : 'succeed';
      case 'everywhere':
        return reason();
      case 'arm64':
        return node.labels[LABEL_ARCH] === 'arm64' ? 'DaemonFailed' : 'succeed';
      case 'hangs':
        return prng.chance(0.05) ? 'hang' : prng.chance(0.03) ? reason() : 'succeed';
      case 'unreachable':
        return prng.chance(0.05) ? 'never-start' : 'succeed';
      case 'invalid':
        return prng.chance(0.01) ? 'InvalidParameters' : 'succeed';
    }
  };
}

export function randomScenario(seed: number, prng: Prng, modes: readonly FailureMode[], largest = 3000): Scenario {
  const shape = randomFleetShape(prng, largest);
  const mode = prng.pick(modes);
  const strategy = randomStrategy(prng, shape.size >= 400);
  const spec = baseSpec({ strategy });
  const world = new RolloutWorld(
    seed,
    `rollout-${seed}`,
    `uid-rollout-${seed}`,
    spec,
    makeNodes(prng, shape),
    releases(),
    behaviourFor(mode),
  );
  return { world, mode, description: `seed ${seed}: ${shape.size} machines, ${mode}, ${JSON.stringify(strategy)}` };
}
