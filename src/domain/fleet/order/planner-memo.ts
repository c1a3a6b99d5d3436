import { buildFleet, releaseKeyOf, type Fleet, type ReleaseFacts, type ReusableFleet } from './fleet.js';
import type { AgentRolloutSpec } from '../spec/rollout-spec.js';
import type { NodeGate } from '../decide/node-verdict.js';
import type { RolloutSnapshot } from './snapshot.js';
import { makeTargetOrder, recheckTargetOrder, selectorKey } from './target-order.js';

/**
 * What the planner keeps between plans so that a plan costs what changed: per rollout, its
 * targets in order (target-order.ts) and the last fleet built over them, whose machines are
 * reused where nothing they depend on changed (fleet.ts). It holds no decision — only what follows
 * from a snapshot alone, checked against each new snapshot before use — so a plan with a memo
 * equals the plan without one (the property test in test/domain/rollout/planner-memo.test.ts),
 * and a controller that restarts with an empty memo plans the same. One memo per controller
 * process; a plan without one gets an empty one.
 */
export class PlannerMemo {
  private readonly kept = new Map<string, ReusableFleet>();

  /** The rollout's target machines as this snapshot shows them. */
  fleet(
    snapshot: RolloutSnapshot,
    spec: AgentRolloutSpec,
    release: ReleaseFacts,
    nowMs: number,
    gate: NodeGate | null = null,
  ): Fleet {
    const { rollout } = snapshot;
    const selector = spec.targets.selector;
    const last = this.kept.get(rollout.name) ?? null;
    // The last order, when it still holds for these Nodes; a new one shares nothing with the last fleet.
    const order =
      last !== null &&
      last.fleet.order.rolloutUid === rollout.uid &&
      last.fleet.order.selectorKey === selectorKey(selector)
        ? recheckTargetOrder(last.fleet.order, snapshot.nodes)
        : null;
    const fleet =
      order === null
        ? buildFleet(snapshot, spec, release, nowMs, makeTargetOrder(rollout, selector, snapshot.nodes), gate)
        : buildFleet(snapshot, spec, release, nowMs, order, gate, last);
    this.kept.set(rollout.name, {
      fleet,
      releaseKey: releaseKeyOf(release),
      timeoutMs: spec.strategy.operationTimeoutMs,
    });
    return fleet;
  }

  /** Drops what is kept for a rollout that is gone. */
  forget(rolloutName: string): void {
    this.kept.delete(rolloutName);
  }
}
