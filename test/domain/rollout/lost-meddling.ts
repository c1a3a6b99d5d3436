/**
 * A person and the fleet meddling with a simulated rollout, and what the test knows for sure
 * about every machine as a result: operations deleted by hand (at any phase), daemons whose
 * operation vanished mid-upgrade finishing anyway and reporting the new version on their Node,
 * and Nodes that vanish (their running operations failed MachineNotFound). The truth is kept by the test itself, never read from the planner.
 */
import { expect } from 'vitest';
import { childNameFor } from '../../../src/domain/fleet/order/fleet.js';
import { TERMINAL_PHASES } from '../../../src/domain/fleet/status/rollout-status.js';
import { ANNOTATION_AGENT_VERSION, LABEL_PURPOSE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import type { Prng } from '../../sim/harness/index.js';
import { NEW_VERSION } from './fixtures.js';
import type { RolloutWorld, SimOperation } from './rollout-world.js';

export interface LostTruth {
  /** A final status stays as it ended (plan-rollout.ts); what happens after it is not counted. */
  ended: boolean;
  /** Machines whose forward operation was deleted by hand, with that operation as it was then. */
  readonly deleted: Map<string, SimOperation>;
  /** Creates already checked: every later one must not bear the name of a deleted operation. */
  createsChecked: number;
}

export const newTruth = (): LostTruth => ({ ended: false, deleted: new Map(), createsChecked: 0 });

const forward = (op: SimOperation): boolean => op.labels[LABEL_PURPOSE] === 'upgrade';
const atNewVersion = (world: RolloutWorld, machine: string): boolean =>
  world.nodes.get(machine)?.annotations[ANNOTATION_AGENT_VERSION] === NEW_VERSION;

/** Up to three of: a deletion by hand, a late version report of a lost machine, a vanishing Node. */
export function meddle(world: RolloutWorld, prng: Prng, truth: LostTruth): void {
  const status = world.rolloutStatus();
  if (truth.ended) return;
  // An operation deleted before the controller saw it is still announced, so it is created again.
  const announced = new Set(status?.waves.flatMap((wave) => wave.pendingCreates) ?? []);
  for (let event = prng.between(0, 3); event > 0; event -= 1) {
    const kind = prng.weighted([
      ['delete', 3],
      ['report', 3],
      ['vanish', 1],
      ['nothing', 8],
    ] as const);
    if (kind === 'delete') {
      const seen = [...world.operations.values()].filter((op) => forward(op) && !announced.has(op.name));
      if (seen.length === 0) continue;
      const victim = prng.pick(seen);
      world.operations.delete(victim.name);
      truth.deleted.set(victim.machineRef, victim);
    } else if (kind === 'report') {
      // What a real daemon does when its operation vanishes mid-upgrade.
      const running = [...truth.deleted.values()].filter(
        (op) => op.phase === 'InProgress' && world.nodes.has(op.machineRef) && !atNewVersion(world, op.machineRef),
      );
      if (running.length === 0) continue;
      const node = world.nodes.get(prng.pick(running).machineRef);
      if (node === undefined) continue;
      world.nodes.set(node.name, {
        ...node,
        annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: NEW_VERSION },
      });
    } else if (kind === 'vanish' && world.nodes.size > 1) {
      const gone = prng.pick([...world.nodes.keys()]);
      world.nodes.delete(gone);
      // The upstream controller fails what was running there.
      for (const op of world.operations.values()) {
        if (op.machineRef !== gone || op.phase === 'Complete' || op.phase === 'Failed') continue;
        Object.assign(op, { phase: 'Failed', reason: 'MachineNotFound', completedMs: world.nowMs });
      }
    }
  }
}

/**
 * Every present machine is in the class its own evidence says, the lost ones are the ones the
 * status names, none of them was given an operation again, and Succeeded leaves no machine that
 * could have had an operation without one.
 */
export function checkAccounting(world: RolloutWorld, truth: LostTruth, label: string): void {
  const status = world.rolloutStatus();
  if (status === null || truth.ended) return;
  truth.ended = TERMINAL_PHASES.includes(status.phase);
  const at = `${label}, step ${world.step}`;
  const announced = new Set(status.waves.flatMap((wave) => wave.pendingCreates));
  const withOperation = new Set([...world.operations.values()].filter(forward).map((op) => op.machineRef));
  const expected = { lost: 0, alreadyAtTarget: 0, pending: 0 };
  const lostHashes: string[] = [];
  for (const machine of world.nodes.keys()) {
    if (withOperation.has(machine) || announced.has(childNameFor(world.name, machine))) continue;
    const lost = truth.deleted.get(machine);
    if (atNewVersion(world, machine)) expected.alreadyAtTarget += 1;
    else if (lost !== undefined) {
      expected.lost += 1;
      lostHashes.push(lost.name.slice(-12));
    } else expected.pending += 1;
  }
  const { lost, pending, excluded } = status.counts;
  expect({ lost, alreadyAtTarget: excluded.alreadyAtTarget, pending }, `${at}: counts`).toEqual(expected);
  const listed = status.waves.flatMap((wave) => wave.lostMachines ?? []);
  expect(listed.sort(), `${at}: the lost machines named`).toEqual(lostHashes.sort());
  const lostNames = new Set([...truth.deleted.values()].map((op) => op.name));
  const again = world.creates.slice(truth.createsChecked).filter((create) => lostNames.has(create.name));
  expect(again, `${at}: lost machines given another operation`).toEqual([]);
  truth.createsChecked = world.creates.length;
  if (status.phase === 'Succeeded') expect(expected.pending, `${at}: Succeeded with machines never dispatched`).toBe(0);
}
