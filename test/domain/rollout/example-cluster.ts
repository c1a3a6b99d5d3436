/** A small, fully scripted cluster for the example tests: the test decides every operation's fate. */
import type { RolloutAction, RolloutPlan } from '../../../src/domain/fleet/decide/actions.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import type { NodeFacts } from '../../../src/domain/fleet/order/snapshot.js';
import {
  ANNOTATION_AGENT_VERSION,
  LABEL_ARCH,
  LABEL_PURPOSE,
  LABEL_WAVE,
  LABEL_ZONE,
} from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { baseSpec, OLD_VERSION, releases } from './fixtures.js';
import { RolloutWorld, STEP_MS, type SimOperation } from './rollout-world.js';

/** `size` nodes; every fourth is arm64; zones a, b, c in turn. */
export function exampleNodes(size: number): Map<string, NodeFacts> {
  return new Map(
    Array.from({ length: size }, (_, index) => {
      const name = `node-${String(index).padStart(3, '0')}`;
      const labels = {
        [LABEL_ARCH]: index % 4 === 3 ? 'arm64' : 'amd64',
        [LABEL_ZONE]: ['a', 'b', 'c'][index % 3] as string,
        'node-role.kubernetes.io/agent': '',
      };
      return [name, { name, uid: `uid-${name}`, labels, annotations: { [ANNOTATION_AGENT_VERSION]: OLD_VERSION } }];
    }),
  );
}

/** Daemons in examples do nothing on their own: tests finish operations explicitly. */
export function exampleCluster(size: number, overrides: Record<string, unknown> = {}): RolloutWorld {
  return new RolloutWorld(
    1,
    'fleet',
    'uid-fleet',
    baseSpec(overrides),
    exampleNodes(size),
    releases(),
    () => 'never-start',
  );
}

export function strategy(overrides: Record<string, unknown>): Record<string, unknown> {
  return { strategy: { ...(baseSpec()['strategy'] as object), ...overrides } };
}

/** Plans and applies one reconcile; returns the plan. */
export function reconcile(world: RolloutWorld): RolloutPlan {
  const plan = planRollout(world.snapshot(), world.nowMs, world.memo);
  world.apply(plan);
  return plan;
}

export function later(world: RolloutWorld, ms = STEP_MS): void {
  world.nowMs += ms;
  world.step += Math.max(1, Math.round(ms / STEP_MS));
}

export const creates = (plan: RolloutPlan): Extract<RolloutAction, { kind: 'CreateOperation' }>['operation'][] =>
  plan.actions.flatMap((action) => (action.kind === 'CreateOperation' ? [action.operation] : []));

export const eventReasons = (plan: RolloutPlan): string[] =>
  plan.actions.flatMap((action) => (action.kind === 'RecordEvent' ? [action.event.reason] : []));

export function operationsOf(world: RolloutWorld, wave?: string, purpose = 'upgrade'): SimOperation[] {
  return [...world.operations.values()].filter(
    (op) => op.labels[LABEL_PURPOSE] === purpose && (wave === undefined || op.labels[LABEL_WAVE] === wave),
  );
}

export function live(world: RolloutWorld): SimOperation[] {
  return [...world.operations.values()].filter((op) => op.phase !== 'Complete' && op.phase !== 'Failed');
}

/** Finishes an operation as its daemon would, including the version report on Complete. */
export function finish(world: RolloutWorld, op: SimOperation, reason: string): void {
  op.phase = reason === 'Succeeded' ? 'Complete' : 'Failed';
  op.reason = reason;
  op.message = reason === 'Succeeded' ? 'AgentUpgrade completed' : `failed: ${reason}`;
  op.startedMs = op.startedMs ?? world.nowMs;
  op.completedMs = world.nowMs;
  const node = world.nodes.get(op.machineRef);
  if (op.phase === 'Complete' && node !== undefined) {
    world.nodes.set(node.name, {
      ...node,
      annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: op.version },
    });
  }
}

export function start(world: RolloutWorld, op: SimOperation): void {
  op.phase = 'InProgress';
  op.startedMs = world.nowMs;
}

/** Reconciles and finishes whatever is live with `reason` until nothing more is created, at most `rounds` times. */
export function settle(world: RolloutWorld, reason = 'Succeeded', rounds = 100): RolloutPlan {
  let plan = reconcile(world);
  for (let round = 0; round < rounds; round += 1) {
    const running = live(world);
    if (running.length === 0 && creates(plan).length === 0) break;
    for (const op of running) finish(world, op, reason);
    later(world);
    plan = reconcile(world);
  }
  return plan;
}
