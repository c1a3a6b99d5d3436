/**
 * The planner's memo (planner-memo.ts) changes what a plan costs, never what it says: on random
 * fleets whose Nodes join, leave, change labels, uid or agent version, whose selector and timeout
 * change and whose rollout is re-created under the same name, a plan made with the memo kept
 * from every earlier plan equals a plan made without one, at every step — and so on fleets whose
 * kubelets renew their Leases or stop, whose Nodes turn NotReady and back, and whose Node gate is
 * turned off and on. SIM_SEED=<n> runs one seed alone.
 */
import { describe, expect, it } from 'vitest';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { PlannerMemo } from '../../../src/domain/fleet/order/planner-memo.js';
import type { NodeFacts } from '../../../src/domain/fleet/order/snapshot.js';
import { ANNOTATION_AGENT_VERSION, LABEL_ZONE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng, seedOverride } from '../../sim/harness/index.js';
import { NEW_VERSION } from './fixtures.js';
import { quiescent } from './run-rollout.js';
import type { RolloutWorld } from './rollout-world.js';
import { randomScenario } from './scenarios.js';

// SIM_SEED, the harness's one seed variable, runs one seed alone.
const ONLY = seedOverride() ?? undefined;
const SEEDS = ONLY !== undefined ? [ONLY] : Array.from({ length: 24 }, (_, index) => 7000 + index);
const MAX_STEPS = 400;
const ROLE = 'node-role.kubernetes.io/agent';

type Change = (world: RolloutWorld, prng: Prng) => void;

const replaceNode = (world: RolloutWorld, node: NodeFacts): void => void world.nodes.set(node.name, node);
const someNode = (world: RolloutWorld, prng: Prng): NodeFacts | undefined =>
  world.nodes.size === 0 ? undefined : prng.pick([...world.nodes.values()]);

/** What a fleet and its operators do to the inputs the memo keeps. */
const CHANGES: readonly (readonly [Change, number])[] = [
  [
    (world, prng) =>
      edit(someNode(world, prng), (node) =>
        replaceNode(world, { ...node, annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: NEW_VERSION } }),
      ),
    4,
  ],
  [
    (world, prng) =>
      edit(someNode(world, prng), (node) =>
        replaceNode(world, { ...node, labels: { ...node.labels, [LABEL_ZONE]: `zone-${prng.between(1, 9)}` } }),
      ),
    2,
  ],
  [
    (world, prng) => edit(someNode(world, prng), (node) => replaceNode(world, { ...node, uid: `${node.uid}-again` })),
    1,
  ],
  [
    (world, prng) =>
      edit(someNode(world, prng), (node) => replaceNode(world, { ...node, labels: { ...node.labels, [ROLE]: 'off' } })),
    1,
  ],
  [(world, prng) => edit(someNode(world, prng), (node) => void world.nodes.delete(node.name)), 1],
  [
    (world, prng) =>
      edit(someNode(world, prng), (node) =>
        replaceNode(world, { ...node, name: `${node.name}-b`, uid: `${node.uid}-b` }),
      ),
    1,
  ],
  [
    (world) =>
      void (world.spec = {
        ...world.spec,
        targets: {
          selector: {
            matchLabels: { [ROLE]: '' },
            matchExpressions: [{ key: LABEL_ZONE, operator: 'NotIn', values: ['zone-1'] }],
          },
        },
      }),
    1,
  ],
  [(world) => void (world.spec = { ...world.spec, targets: { selector: { matchLabels: { [ROLE]: '' } } } }), 1],
  [
    (world, prng) =>
      void (world.spec = {
        ...world.spec,
        strategy: { ...(world.spec['strategy'] as object), operationTimeout: `${prng.between(1, 20)}m` },
      }),
    1,
  ],
  [(world) => void world.renew(), 1],
  // The Node gate's evidence: kubelets renewing their Leases, Nodes turning NotReady and back, the gate's settings.
  [(world, prng) => renewLeases(world, prng), 4],
  [
    (world, prng) =>
      edit(someNode(world, prng), (node) =>
        replaceNode(world, {
          ...node,
          ready: { status: prng.pick(['True', 'False', 'Unknown']), sinceMs: world.nowMs },
        }),
      ),
    2,
  ],
  [(world, prng) => edit(someNode(world, prng), (node) => void world.leases?.delete(node.name)), 1],
  [
    (world, prng) =>
      void (world.spec = {
        ...world.spec,
        strategy: {
          ...(world.spec['strategy'] as object),
          nodeReadiness: { enabled: prng.chance(0.8), timeout: `${prng.between(1, 10)}m` },
        },
      }),
    1,
  ],
];

/** Some kubelets renew (the others stopped), with a duration that may run out before the next renewal. */
function renewLeases(world: RolloutWorld, prng: Prng): void {
  world.leases ??= new Map();
  for (const name of world.nodes.keys())
    if (prng.chance(0.7))
      world.leases.set(name, { name, renewMs: world.nowMs, durationMs: prng.between(1, 6) * 10_000 });
}

function edit(node: NodeFacts | undefined, change: (node: NodeFacts) => void): void {
  if (node !== undefined) change(node);
}

function change(world: RolloutWorld, prng: Prng): void {
  if (!prng.chance(0.3)) return;
  const picked = prng.weighted(CHANGES.map(([fn, weight]) => [fn, weight] as const));
  picked(world, prng);
}

describe('the planner memo', () => {
  it('plans what a planner without it plans, at every step of random fleets that change under it', () => {
    let compared = 0;
    for (const seed of SEEDS) {
      const prng = new Prng(seed);
      const { world, description } = randomScenario(seed, prng, ['none', 'some', 'hangs'], 400);
      const memo = new PlannerMemo();
      for (; world.step < MAX_STEPS; world.advance()) {
        change(world, prng);
        const snapshot = world.snapshot();
        const cached = planRollout(snapshot, world.nowMs, memo);
        expect(cached, `${description}: step ${world.step}`).toEqual(planRollout(snapshot, world.nowMs));
        compared += 1;
        world.apply(cached);
        const status = world.rolloutStatus();
        if (status !== null && world.step > 50 && quiescent(world, status)) break;
        world.runDaemons();
      }
    }
    console.log(`${compared} plans compared over ${SEEDS.length} seeds`);
    expect(compared).toBeGreaterThan(SEEDS.length * 20);
  }, 120_000);
});
