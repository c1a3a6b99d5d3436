import { childNameFor, rollbackChildNameFor } from '../../../domain/fleet/order/fleet.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { ForeignOperation, NodeFacts, RolloutObject } from '../../../domain/fleet/order/snapshot.js';

/**
 * Machines other rollouts hold that the caches do not show as operations yet: the ones announced
 * in their statuses' pendingCreates (an announcement is a claim: its creates follow, whether by
 * this process or its successor after a crash), and the ones this process created a moment ago
 * that the watch has not delivered. Given to a rollout's plan as live foreign operations, they
 * make those machines a conflict, so two rollouts never both dispatch to one machine.
 */
export function claimsElsewhere(
  rollout: string,
  others: readonly { readonly object: RolloutObject; readonly status: unknown }[],
  nodes: readonly NodeFacts[],
  created: ReadonlyMap<string, { readonly name: string; readonly machineRef: string }[]>,
): ForeignOperation[] {
  const claims: ForeignOperation[] = [];
  for (const [owner, operations] of created)
    if (owner !== rollout) for (const op of operations) claims.push({ ...op, phase: 'Pending' });
  for (const other of others) {
    if (other.object.name === rollout) continue;
    const previous = readPreviousStatus(other.status);
    const announced = new Set([
      ...previous.waves.flatMap((wave) => wave.pendingCreates),
      ...(previous.rollback?.pendingCreates ?? []),
    ]);
    if (announced.size === 0) continue;
    // Child names hash the machine's name: find the announced machines among the Nodes.
    for (const node of nodes) {
      const forward = childNameFor(other.object.name, node.name);
      const rollback = rollbackChildNameFor(other.object.name, node.name);
      if (announced.has(forward)) claims.push({ name: forward, machineRef: node.name, phase: 'Pending' });
      if (announced.has(rollback)) claims.push({ name: rollback, machineRef: node.name, phase: 'Pending' });
    }
  }
  return claims;
}
