import { selectorMatches, type LabelSelector } from '../../common/machine-selector.js';
import { diverseOrder } from './machine-order.js';
import { stableHash64 } from './mix64.js';
import type { NodeFacts } from './snapshot.js';

/**
 * A rollout's target machines in its order, with what names them: everything here depends only on
 * the rollout's name and uid, its selector, and each Node's name, uid and labels — never on
 * operations, versions or time — so it can be kept from one plan to the next and checked against
 * the new snapshot in one pass over the Nodes (planner-memo.ts). A Node whose annotations changed
 * (its agent version) keeps its place; one that joined, left or changed its labels or uid makes
 * the order anew.
 */

export interface TargetEntry {
  readonly node: NodeFacts;
  /** Position in the rollout's order: a hash of (rollout uid, machine uid), finalized. */
  readonly key: string;
  /** 48 bits of the machine name's hash: names the machine's operations. */
  readonly hash: string;
  readonly childName: string;
  readonly rollbackChildName: string;
}

export interface TargetOrder {
  readonly rolloutName: string;
  readonly rolloutUid: string;
  readonly selectorKey: string;
  /** The targets in rollout order. */
  readonly entries: readonly TargetEntry[];
  /** Position in `entries` by machine name, by operation name (forward and rollback) and by name hash. */
  readonly indexByName: ReadonlyMap<string, number>;
  readonly indexByChildName: ReadonlyMap<string, number>;
  readonly indexByHash: ReadonlyMap<string, number>;
  /** Every Node of the snapshot the order was last checked against, as it listed them. */
  readonly nodeList: readonly NodeFacts[];
  /** Positions in canary order (machine-order.ts), made on first use. */
  diverse: readonly number[] | null;
}

/** 48 bits of the machine name's hash: names stay short and 10,000 machines collide with odds of 1 in 5 million. */
export const machineHash = (machineName: string): string => stableHash64(machineName).slice(0, 12);

export function makeTargetOrder(
  rollout: { readonly name: string; readonly uid: string },
  selector: LabelSelector,
  nodes: readonly NodeFacts[],
): TargetOrder {
  const ranked = nodes
    .filter((node) => selectorMatches(selector, node.labels))
    .map((node) => {
      const key = stableHash64(`${rollout.uid}/${node.uid}`);
      // Sorted by the first 52 bits of the key as a number (exact in a double), then by name.
      return { node, key, rank: Number.parseInt(key.slice(0, 13), 16) };
    });
  ranked.sort((a, b) => a.rank - b.rank || (a.node.name < b.node.name ? -1 : 1));
  const entries = ranked.map(({ node, key }): TargetEntry => {
    const hash = machineHash(node.name);
    return {
      node,
      key,
      hash,
      childName: `${rollout.name}-${hash}`,
      rollbackChildName: `${rollout.name}-rb-${hash}`,
    };
  });
  return indexed(rollout, selectorKey(selector), entries, nodes);
}

/**
 * The order again for `nodes`, or `null` when it does not hold for them: a Node joined or left,
 * or one changed its uid or labels. The caches list Nodes in a stable order, so each Node is
 * compared with the one at its place last time: the same object costs nothing, another object
 * of the same Node (its annotations changed) a look at its uid and labels, and anything else —
 * Nodes in new places — makes the order anew.
 */
export function recheckTargetOrder(order: TargetOrder, nodes: readonly NodeFacts[]): TargetOrder | null {
  if (nodes.length !== order.nodeList.length) return null;
  let entries: TargetEntry[] | null = null;
  for (let at = 0; at < nodes.length; at += 1) {
    const node = nodes[at] as NodeFacts;
    const before = order.nodeList[at] as NodeFacts;
    if (before === node) continue;
    if (before.name !== node.name || before.uid !== node.uid || !sameLabels(before.labels, node.labels)) return null;
    const index = order.indexByName.get(node.name);
    if (index === undefined) continue;
    entries ??= [...order.entries];
    entries[index] = { ...(entries[index] as TargetEntry), node };
  }
  if (order.nodeList === nodes) return order;
  return { ...order, entries: entries ?? order.entries, nodeList: nodes };
}

/** The selector as the order remembers it: two equal selectors select the same Nodes. */
export function selectorKey(selector: LabelSelector): string {
  return JSON.stringify(selector);
}

/** Positions of the targets in canary order, kept with the order once made. */
export function diversePositions(order: TargetOrder): readonly number[] {
  order.diverse ??= diverseOrder(order.entries.map((entry, index) => ({ index, labels: entry.node.labels }))).map(
    (item) => item.index,
  );
  return order.diverse;
}

function indexed(
  rollout: { readonly name: string; readonly uid: string },
  selectorKey: string,
  entries: readonly TargetEntry[],
  nodeList: readonly NodeFacts[],
): TargetOrder {
  const indexByName = new Map<string, number>();
  const indexByChildName = new Map<string, number>();
  const indexByHash = new Map<string, number>();
  entries.forEach((entry, index) => {
    indexByName.set(entry.node.name, index);
    indexByChildName.set(entry.childName, index);
    indexByHash.set(entry.hash, index);
  });
  return {
    rolloutName: rollout.name,
    rolloutUid: rollout.uid,
    selectorKey,
    entries,
    indexByName,
    indexByChildName,
    indexByHash,
    nodeList,
    diverse: null,
  };
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => a[key] === b[key]);
}
