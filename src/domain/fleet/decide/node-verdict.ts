import type { ChildOutcome } from './classify-child.js';
import type { ChildOperation, LeaseFacts, NodeFacts } from '../order/snapshot.js';

/**
 * The Node gate: an operation that reports Complete says only that the daemon published it. The
 * machine counts as succeeded once its Node says the node came back — its `Ready` condition is
 * not False or Unknown, and its kubelet's Lease was renewed after the operation completed and has
 * not run out since. Judged from what the snapshot holds, with no memory:
 *
 * - while the machine's wave still runs, a Node that has not proved itself is waited for (the
 *   operation keeps its slot) until `timeoutMs` after the completion, then it failed,
 *   NodeNotReady;
 * - while the wave bakes, a Node that is not Ready now failed at once (it turned NotReady within
 *   the bake: the wave completed only when every Node had proved itself or failed);
 * - once the bake is over, what held at its end stands: the Node failed when its Lease was never
 *   renewed after the upgrade or it was already NotReady then and has not come back since. A Node
 *   that turns NotReady later is no longer the rollout's business.
 *
 * A Node without a Ready condition, or without a Lease, is judged on what it has: every kubelet
 * keeps both, so only Nodes no kubelet runs (some test clusters) lack them.
 */

export const REASON_NODE_NOT_READY = 'NodeNotReady';

export interface NodeGate {
  readonly timeoutMs: number;
  /** The kubelets' Leases by Node name; `null`: the snapshot carries none. */
  readonly leases: ReadonlyMap<string, LeaseFacts> | null;
  /** Per wave name, when it completed and until when it bakes, as the last status says. */
  readonly waves: ReadonlyMap<string, WaveWatch>;
}

export interface WaveWatch {
  readonly completedMs: number | null;
  readonly bakeUntilMs: number | null;
}

export interface NodeVerdict {
  readonly outcome: ChildOutcome;
  /**
   * The next instant at which time alone may change the verdict (a timeout, a Lease running out,
   * the end of the bake). Until then it holds while the Node, its Lease and its wave's times do.
   */
  readonly changesAtMs: number | null;
}

/** The verdict on a machine whose forward operation is Complete. */
export function judgeNode(
  child: ChildOperation,
  node: NodeFacts,
  wave: string,
  gate: NodeGate,
  nowMs: number,
): NodeVerdict {
  const completedMs = child.completedMs ?? child.startedMs ?? child.createdMs;
  const lease = gate.leases?.get(node.name);
  const renewed = lease === undefined || (lease.renewMs !== null && lease.renewMs > completedMs);
  const staleFromMs = staleFrom(lease);
  const deadlineMs = completedMs + gate.timeoutMs;
  const watch = gate.waves.get(wave);
  const endMs = watch?.bakeUntilMs ?? watch?.completedMs ?? null;
  // A Node never renewed since the upgrade failed when the gate's time ran out; one that was, when it went down.
  const failed = (downSinceMs: number | null, atLeastMs: number): ChildOutcome => ({
    kind: 'failed',
    reason: REASON_NODE_NOT_READY,
    atMs: renewed ? Math.max(atLeastMs, downSinceMs ?? deadlineMs) : deadlineMs,
    usable: false,
  });
  if (endMs !== null && nowMs >= endMs) {
    // The watch is over: only a Node down by its end, and not back since, stays failed. Judged as
    // at the end, so the verdict no longer changes with time.
    const downAtEndMs = notReadySince(node, staleFromMs, endMs);
    if (renewed && (downAtEndMs === null || downAtEndMs > endMs)) return succeeded();
    return { outcome: failed(downAtEndMs, completedMs), changesAtMs: null };
  }
  // Within the watch the verdict changes with time only when the Lease runs out (which turns a
  // proved Node NotReady, or dates when a failed one went down), the gate's time runs out for a
  // Node waited for, or the bake ends.
  const downSinceMs = notReadySince(node, staleFromMs, nowMs);
  const staleAtMs = renewed ? staleFromMs : Number.POSITIVE_INFINITY;
  const end = endMs ?? Number.POSITIVE_INFINITY;
  if (renewed && downSinceMs === null)
    return { outcome: { kind: 'succeeded' }, changesAtMs: earliestAfter(nowMs, [staleFromMs, end]) };
  // Baking: the wave completed once every Node had proved itself, so this one turned NotReady.
  if (watch?.completedMs !== null && watch?.completedMs !== undefined)
    return { outcome: failed(downSinceMs, completedMs), changesAtMs: earliestAfter(nowMs, [staleAtMs, end]) };
  if (nowMs <= deadlineMs) return { outcome: { kind: 'inFlight' }, changesAtMs: deadlineMs + 1 };
  return { outcome: failed(downSinceMs, deadlineMs), changesAtMs: earliestAfter(nowMs, [staleAtMs, end]) };
}

function succeeded(): NodeVerdict {
  return { outcome: { kind: 'succeeded' }, changesAtMs: null };
}

/** When the Lease runs out: +∞ without a Lease or a duration, −∞ when it was never renewed. */
function staleFrom(lease: LeaseFacts | undefined): number {
  if (lease === undefined || lease.durationMs === null) return Number.POSITIVE_INFINITY;
  if (lease.renewMs === null) return Number.NEGATIVE_INFINITY;
  return lease.renewMs + lease.durationMs;
}

/** Since when the Node is NotReady (its condition, or its Lease run out), or `null` while it is not. */
function notReadySince(node: NodeFacts, staleFromMs: number, nowMs: number): number | null {
  const ready = node.ready;
  const conditionSinceMs =
    ready === undefined || ready.status === 'True' ? null : (ready.sinceMs ?? Number.NEGATIVE_INFINITY);
  const leaseSinceMs = staleFromMs <= nowMs ? staleFromMs : null;
  if (conditionSinceMs === null) return leaseSinceMs;
  return leaseSinceMs === null ? conditionSinceMs : Math.min(conditionSinceMs, leaseSinceMs);
}

/** The earliest of `instants` after `nowMs`, or `null` when none is. */
function earliestAfter(nowMs: number, instants: readonly number[]): number | null {
  const later = instants.filter((at) => at > nowMs && Number.isFinite(at));
  return later.length === 0 ? null : Math.min(...later);
}
