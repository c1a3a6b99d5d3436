import { isLivePhase, type ChildOperation, type RolloutSnapshot } from './snapshot.js';
import { machineHash, type TargetOrder } from './target-order.js';
import { LABEL_PURPOSE, LABEL_WAVE } from '../spec/rollout-vocabulary.js';

/**
 * The operations of a snapshot sorted onto the rollout's targets, in one pass over them (a fleet
 * of 10,000 has as many operations, and this runs on every plan): each target's own forward and
 * rollback operation, the targets another live operation holds, and this rollout's operations
 * whose machine left the targets.
 */
export interface SortedChildren {
  /** By the target's position in the order. */
  readonly forwardAt: readonly (ChildOperation | undefined)[];
  readonly rollbackAt: readonly (ChildOperation | undefined)[];
  readonly busyAt: readonly (true | undefined)[];
  /** Per wave label, the machine hashes of the forward children whose machine left the targets. */
  readonly goneChildrenByWave: ReadonlyMap<string, readonly string[]>;
  readonly goneMachines: number;
  readonly goneRollbackChildren: number;
}

export function sortChildren(snapshot: RolloutSnapshot, order: TargetOrder): SortedChildren {
  const forwardAt: (ChildOperation | undefined)[] = [];
  const rollbackAt: (ChildOperation | undefined)[] = [];
  const busyAt: (true | undefined)[] = [];
  const gone = new Gone();
  for (const operation of snapshot.foreignOperations) {
    const index = order.indexByName.get(operation.machineRef);
    if (index !== undefined && isLivePhase(operation.phase)) busyAt[index] = true;
  }
  const rolloutUid = snapshot.rollout.uid;
  for (const child of snapshot.children) {
    const index = order.indexByName.get(child.machineRef);
    if (child.ownerUid !== rolloutUid) {
      // A namesake's child (a rollout of the same name deleted before): another's operation.
      if (index !== undefined && isLivePhase(child.phase)) busyAt[index] = true;
    } else if (index === undefined) {
      gone.add(child);
    } else {
      const rollback = child.labels[LABEL_PURPOSE] === 'rollback';
      pick(rollback ? rollbackAt : forwardAt, index, child, expectedName(order, index, rollback));
    }
  }
  return { forwardAt, rollbackAt, busyAt, ...gone.counts() };
}

function expectedName(order: TargetOrder, index: number, rollback: boolean): string {
  const entry = order.entries[index];
  return (rollback ? entry?.rollbackChildName : entry?.childName) ?? '';
}

/** One child per target and purpose: the one with the expected name, else the first by name (a copy made by hand). */
function pick(chosen: (ChildOperation | undefined)[], index: number, child: ChildOperation, expected: string): void {
  const current = chosen[index];
  if (current === undefined || (current.name !== expected && (child.name === expected || child.name < current.name)))
    chosen[index] = child;
}

/** This rollout's children whose machine is no longer a target. */
class Gone {
  private readonly byWave = new Map<string, string[]>();
  private readonly machines = new Set<string>();
  private rollbackChildren = 0;

  add(child: ChildOperation): void {
    this.machines.add(child.machineRef);
    if (child.labels[LABEL_PURPOSE] === 'rollback') {
      this.rollbackChildren += 1;
      return;
    }
    const wave = child.labels[LABEL_WAVE] ?? '';
    const hashes = this.byWave.get(wave) ?? [];
    hashes.push(machineHash(child.machineRef));
    this.byWave.set(wave, hashes);
  }

  counts(): Pick<SortedChildren, 'goneChildrenByWave' | 'goneMachines' | 'goneRollbackChildren'> {
    return {
      goneChildrenByWave: this.byWave,
      goneMachines: this.machines.size,
      goneRollbackChildren: this.rollbackChildren,
    };
  }
}
