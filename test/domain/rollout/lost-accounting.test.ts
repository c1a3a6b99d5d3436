/**
 * Operations deleted by hand. Each is lost: counted, never recreated, and its machine counted by
 * what it shows (at the target version when its daemon finished anyway). Its loss must never be
 * blamed on another machine, and a rollout never succeeds while a machine it could have upgraded
 * had no operation. Every failure names its seed; SIM_SEED=<n> runs one seed alone,
 * ROLLOUT_SEEDS=<n> runs n seeds.
 */
import { describe, expect, it } from 'vitest';
import { DIGEST_ORDER } from '../../../src/domain/fleet/decide/loss-digest.js';
import { ANNOTATION_AGENT_VERSION } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng, seedOverride } from '../../sim/harness/index.js';
import { creates, exampleCluster, later, operationsOf, reconcile, settle, start, strategy } from './example-cluster.js';
import { NEW_VERSION } from './fixtures.js';
import { checkInvariants } from './invariants.js';
import { checkAccounting, meddle, newTruth } from './lost-meddling.js';
import { quiescent, runRollout } from './run-rollout.js';
import { randomScenario } from './scenarios.js';

// SIM_SEED, the harness's one seed variable, runs one seed alone.
const ONLY = seedOverride() ?? undefined;
const MANY = process.env['ROLLOUT_SEEDS'];
const seeds = (first: number, count: number): number[] =>
  ONLY !== undefined
    ? [ONLY]
    : Array.from({ length: MANY !== undefined ? Number(MANY) : count }, (_, index) => first + index);

describe('operations deleted by hand', () => {
  it('leave every machine in exactly one class, the one its own evidence says, whatever comes after', () => {
    let deletions = 0;
    for (const seed of seeds(6000, 40)) {
      const prng = new Prng(seed);
      const { world, description } = randomScenario(seed, prng, ['none', 'some'], 400);
      // Rollbacks would count machines rolled back; this is about the forward rollout's books.
      (world.spec['strategy'] as Record<string, unknown>)['onFailure'] = 'Halt';
      const truth = newTruth();
      const chaos = new Prng(seed ^ 0x1057);
      const result = runRollout(world, {
        maxSteps: 3000,
        approve: true,
        label: description,
        meddle: (at) => meddle(at, chaos, truth),
        check: (at) => {
          if (truth.ended) return;
          checkInvariants(at, description);
          checkAccounting(at, truth, description);
        },
      });
      expect(quiescent(world, result.status), `${description}: did not settle`).toBe(true);
      deletions += truth.deleted.size;
    }
    console.log(`${deletions} operations deleted by hand`);
    if (ONLY === undefined) expect(deletions).toBeGreaterThan(100);
  }, 120_000); // CPU-bound: bounds a hang, and holds with a core taken.

  it('do not make a rollout skip a machine when the lost one reports the new version later', () => {
    const world = exampleCluster(6, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 2 }] }));
    expect(creates(reconcile(world))).toHaveLength(2);
    later(world);
    reconcile(world);
    for (const op of operationsOf(world)) start(world, op);
    const [victim] = operationsOf(world);
    world.operations.delete(victim!.name);
    later(world);
    expect(reconcile(world).status.counts.lost).toBe(1);
    // The daemon finishes anyway and reports the version on its Node.
    const node = world.nodes.get(victim!.machineRef)!;
    world.nodes.set(node.name, { ...node, annotations: { [ANNOTATION_AGENT_VERSION]: NEW_VERSION } });
    later(world);
    const { status } = settle(world);
    expect(status.phase).toBe('Succeeded');
    expect(status.progress).toBe('5/5');
    expect(status.counts).toMatchObject({ succeeded: 5, lost: 0, pending: 0, excluded: { alreadyAtTarget: 1 } });
    expect(status.waves[0]).toMatchObject({ lost: 1, lostAtTarget: 1 });
    const upgraded = new Set(operationsOf(world).map((op) => op.machineRef));
    expect([...world.nodes.keys()].filter((name) => !upgraded.has(name))).toEqual([victim!.machineRef]);
  });

  it('are read off the wave order when more go at once than the digest can name', () => {
    const world = exampleCluster(40, strategy({ waves: [{ name: 'all', percent: 100, maxInFlight: 30 }] }));
    reconcile(world);
    later(world);
    reconcile(world);
    const victims = operationsOf(world).slice(0, DIGEST_ORDER + 4);
    for (const op of victims) world.operations.delete(op.name);
    later(world);
    const { status } = settle(world);
    expect(status.phase).toBe('Succeeded');
    expect(status.counts).toMatchObject({ succeeded: 40 - victims.length, lost: victims.length, pending: 0 });
    expect(new Set(status.waves[0]?.lostMachines)).toEqual(new Set(victims.map((op) => op.name.slice(-12))));
    expect(operationsOf(world).filter((op) => victims.some((victim) => victim.name === op.name))).toEqual([]);
  });
});
