/**
 * The moments bench/planner plans at, taken from a rollout run on the planner tests' simulated
 * cluster (test/domain/rollout/rollout-world.ts) with every daemon succeeding: the plan that
 * starts the last wave (and the snapshot just before it), a few steps into that wave with many
 * operations in flight, and that same snapshot with 100 of them finished.
 */
import type { RolloutSnapshot } from '../../src/domain/fleet/order/snapshot.js';
import { LABEL_WAVE } from '../../src/domain/fleet/spec/rollout-vocabulary.js';
import { exampleNodes, later, reconcile } from '../../test/domain/rollout/example-cluster.js';
import { baseSpec, releases } from '../../test/domain/rollout/fixtures.js';
import { RolloutWorld } from '../../test/domain/rollout/rollout-world.js';

export interface Moment {
  readonly snapshot: RolloutSnapshot;
  readonly nowMs: number;
}

export interface RolloutMoments {
  readonly beforeWave: Moment;
  readonly waveStart: Moment;
  readonly running: Moment;
  readonly changed: Moment;
  readonly changedChildren: number;
}

const LAST_WAVE = 'rest';
const CHANGED = 100;
/** Steps into the last wave before `running` is taken: enough for operations to be in flight. */
const STEPS_INTO_WAVE = 3;

const STRATEGY = {
  waves: [
    { name: 'canary', count: 2, maxInFlight: 2, gate: 'Auto' },
    { name: 'early', percent: 10, maxInFlight: '100%' },
    { name: LAST_WAVE, percent: 100, maxInFlight: '100%' },
  ],
  operationTimeout: '1h',
  onFailure: 'Halt',
};

export function rolloutMoments(machines: number): RolloutMoments {
  const spec = baseSpec({ strategy: STRATEGY });
  const world = new RolloutWorld(1, 'fleet', 'uid-fleet', spec, exampleNodes(machines), releases(), () => 'succeed');
  let previous: Moment | null = null;
  let found: { beforeWave: Moment; waveStart: Moment } | null = null;
  // Bounded: the early wave takes about machines / 1,000 steps at 100 creates per plan, and each operation a few steps.
  for (let step = 0; step < 100 + machines / 50; step += 1) {
    const moment = { snapshot: world.snapshot(), nowMs: world.nowMs };
    const plan = reconcile(world);
    const startsLastWave = plan.actions.some(
      (action) => action.kind === 'CreateOperation' && action.operation.metadata.labels[LABEL_WAVE] === LAST_WAVE,
    );
    if (found === null && startsLastWave && previous !== null) found = { beforeWave: previous, waveStart: moment };
    if (found !== null && inFlight(world) >= CHANGED && stepsSince(found, world) >= STEPS_INTO_WAVE) {
      const running = { snapshot: world.snapshot(), nowMs: world.nowMs };
      return { ...found, running, changed: finished(running, CHANGED), changedChildren: CHANGED };
    }
    previous = moment;
    world.runDaemons();
    later(world);
  }
  throw new Error(`the rollout over ${machines} machines did not reach its last wave with operations in flight`);
}

function inFlight(world: RolloutWorld): number {
  return [...world.operations.values()].filter((op) => op.phase !== 'Complete' && op.phase !== 'Failed').length;
}

function stepsSince(found: { waveStart: Moment }, world: RolloutWorld): number {
  return Math.round((world.nowMs - found.waveStart.nowMs) / 10_000);
}

/** The snapshot with `count` of its live operations finished a moment later (new objects, as an informer's). */
function finished(moment: Moment, count: number): Moment {
  const nowMs = moment.nowMs + 1_000;
  let left = count;
  const children = moment.snapshot.children.map((child) => {
    if (left === 0 || child.phase === 'Complete' || child.phase === 'Failed') return child;
    left -= 1;
    return { ...child, phase: 'Complete' as const, reason: 'Succeeded', completedMs: nowMs };
  });
  return { snapshot: { ...moment.snapshot, children }, nowMs };
}
