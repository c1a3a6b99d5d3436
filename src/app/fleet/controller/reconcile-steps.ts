import type { RolloutAction } from '../../../domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../domain/fleet/decide/child-manifest.js';

/**
 * How many creates go out at once at most, the last of a plan's slow-start batches (1, 2, 4, …).
 * A plan announces at most 100 creates (MAX_PENDING_CREATES): a full step begun at 1 takes seven
 * batches, one begun where the last left off two; the cap only bounds the requests in flight
 * when nothing paces them.
 */
export const CREATE_BATCH_MAX = 64;

/**
 * Where the next reconcile's slow start begins after one whose creates were all answered: twice
 * its largest batch, up to `cap` (after a refusal it begins at 1 again). A ReplicaSet sync
 * begins at 1 every time; a wave here is many reconciles of at most 100 creates
 * (MAX_PENDING_CREATES), and beginning each at 1 spent seven round trips on every step.
 */
export function nextFirstBatch(largestSent: number, cap: number): number {
  return Math.min(Math.max(1, Math.floor(cap)), Math.max(1, largestSent * 2));
}

/** One step of a reconcile: one action, or one batch of a plan's consecutive creates. */
export type ReconcileStep =
  | Exclude<RolloutAction, { kind: 'CreateOperation' }>
  | { readonly kind: 'CreateBatch'; readonly operations: readonly MachineOperationManifest[] };

/**
 * A plan's actions as the steps the reconciler runs one after another: every action as it is,
 * except that each run of consecutive creates becomes slow-start batches of `firstBatch`, then
 * twice that, … up to `batchMax`, as the ReplicaSet controller creates its pods. The order of the
 * creates is kept, and nothing moves across the status update, so a create is sent only after the
 * update announcing it succeeded.
 */
export function reconcileSteps(actions: readonly RolloutAction[], batchMax: number, firstBatch = 1): ReconcileStep[] {
  const cap = Math.max(1, Math.floor(batchMax));
  const steps: ReconcileStep[] = [];
  let run: MachineOperationManifest[] = [];
  const flush = (): void => {
    const batches = slowStart(run, cap, firstBatch);
    steps.push(...batches.map((operations) => ({ kind: 'CreateBatch' as const, operations })));
    run = [];
  };
  for (const action of actions) {
    if (action.kind === 'CreateOperation') {
      run.push(action.operation);
      continue;
    }
    flush();
    steps.push(action);
  }
  flush();
  return steps;
}

/** `items` in order, cut into batches of `first`, twice that, … each at most `cap` long. */
export function slowStart<T>(items: readonly T[], cap: number, first = 1): T[][] {
  const batches: T[][] = [];
  let size = Math.min(cap, Math.max(1, Math.floor(first)));
  for (let start = 0; start < items.length; start += size, size = Math.min(size * 2, cap))
    batches.push(items.slice(start, start + size));
  return batches;
}
