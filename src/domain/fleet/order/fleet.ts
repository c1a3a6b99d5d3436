import { compareVersions, parseVersion } from '../../common/version.js';
import { classifyChild, type ChildOutcome } from '../decide/classify-child.js';
import { judgeNode, type NodeGate, type WaveWatch } from '../decide/node-verdict.js';
import { sortChildren } from './fleet-children.js';
import type { Artifact } from '../spec/release-spec.js';
import type { AgentRolloutSpec } from '../spec/rollout-spec.js';
import { isLivePhase, type ChildOperation, type LeaseFacts, type NodeFacts, type RolloutSnapshot } from './snapshot.js';
import { machineHash, type TargetOrder } from './target-order.js';
import { ANNOTATION_AGENT_VERSION, LABEL_ARCH, LABEL_OPT_OUT, LABEL_WAVE } from '../spec/rollout-vocabulary.js';

/**
 * The target machines of a rollout as one reconcile sees them: which Nodes the selector takes,
 * in the rollout's stable order, each with its child operations and, when it has none, why it
 * would not get one.
 */

export type Exclusion = 'optedOut' | 'alreadyAtTarget' | 'conflict' | 'noArtifact';

/** What the planner knows of the release it rolls out; `null` fields are unknown. */
export interface ReleaseFacts {
  readonly version: string | null;
  readonly artifacts: readonly Artifact[] | null;
}

export interface ClassifiedChild {
  readonly child: ChildOperation;
  readonly outcome: ChildOutcome;
}

export interface ForwardChild extends ClassifiedChild {
  readonly wave: string;
  /** When time alone changes the outcome of a Complete operation under the Node gate (node-verdict.ts). */
  readonly changesAtMs: number | null;
  /** What the Node gate judged a Complete operation from; absent when the gate did not judge it. */
  readonly basis?: NodeBasis;
}

/** The inputs of a Node verdict besides the Node and the operation, kept to tell when it still holds. */
interface NodeBasis {
  readonly lease: LeaseFacts | undefined;
  readonly watch: WaveWatch | undefined;
  readonly timeoutMs: number;
  readonly fromMs: number;
}

export interface Machine {
  readonly name: string;
  readonly uid: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly agentVersion: string | null;
  /** Position in the rollout's order: a hash of (rollout uid, machine uid), finalized. */
  readonly key: string;
  /** The hash of the machine's name that names its operations (`<rollout>-<hash>`). */
  readonly hash: string;
  readonly childName: string;
  readonly rollbackChildName: string;
  readonly forward: ForwardChild | null;
  readonly rollback: ClassifiedChild | null;
  /** Why a machine without a forward child would not get one now; `null`: it would. */
  readonly exclusion: Exclusion | null;
  /** Another live operation (another rollout's or a hand-made one) holds the machine. */
  readonly busy: boolean;
}

export interface Fleet {
  /** The targets, in rollout order. */
  readonly machines: readonly Machine[];
  /** Where each machine sits in `machines`, by name, forward operation name and name hash. */
  readonly order: TargetOrder;
  /** Per wave label, the machine hashes of the forward children whose machine left the targets. */
  readonly goneChildrenByWave: ReadonlyMap<string, readonly string[]>;
  /** Machines with a child of this rollout that are no longer targets. */
  readonly goneMachines: number;
  readonly goneRollbackChildren: number;
}

export function childNameFor(rolloutName: string, machineName: string): string {
  return `${rolloutName}-${machineHash(machineName)}`;
}

export function rollbackChildNameFor(rolloutName: string, machineName: string): string {
  return `${rolloutName}-rb-${machineHash(machineName)}`;
}

export function sameVersion(a: string, b: string): boolean {
  const left = parseVersion(a);
  const right = parseVersion(b);
  return left.ok && right.ok ? compareVersions(left.value, right.value) === 0 : a.trim() === b.trim();
}

/** `sameVersion(·, target)` for many nodes: a fleet reports a handful of distinct versions. */
export function versionMatcher(target: string | null): (version: string | null) => boolean {
  const seen = new Map<string, boolean>();
  return (version) => {
    if (version === null || target === null) return false;
    let same = seen.get(version);
    if (same === undefined) {
      same = sameVersion(version, target);
      seen.set(version, same);
    }
    return same;
  };
}

/** The target machine whose forward operation has this name, if any. */
export function machineByChildName(fleet: Fleet, childName: string): Machine | undefined {
  const index = fleet.order.indexByChildName.get(childName);
  return index === undefined ? undefined : fleet.machines[index];
}

/** The target machine whose name has this hash, if any. */
export function machineByHash(fleet: Fleet, hash: string): Machine | undefined {
  const index = fleet.order.indexByHash.get(hash);
  return index === undefined ? undefined : fleet.machines[index];
}

/**
 * The last fleet of the same order (`order` is that one's, checked again), whose machines may be
 * reused: a machine whose Node and operations are the very objects seen then, whose operations
 * ended (so time does not change their outcome), under the same release and timeout, is the same.
 */
export interface ReusableFleet {
  readonly fleet: Fleet;
  readonly releaseKey: string;
  readonly timeoutMs: number;
}

/** What of the release a machine's exclusion depends on. */
export function releaseKeyOf(release: ReleaseFacts): string {
  return `${release.version ?? ''}|${release.artifacts?.map((artifact) => artifact.arch).join(',') ?? '-'}`;
}

/**
 * `order`: the rollout's targets in order for this snapshot's Nodes (target-order.ts); `gate`: the
 * Node gate's evidence, `null` when the rollout turned it off.
 */
export function buildFleet(
  snapshot: RolloutSnapshot,
  spec: AgentRolloutSpec,
  release: ReleaseFacts,
  nowMs: number,
  order: TargetOrder,
  gate: NodeGate | null,
  last: ReusableFleet | null = null,
): Fleet {
  const timeoutMs = spec.strategy.operationTimeoutMs;
  const classifyForward = (child: ChildOperation, node: NodeFacts): ForwardChild => {
    const wave = child.labels[LABEL_WAVE] ?? '';
    if (!judged(gate, node) || child.phase !== 'Complete')
      return { child, wave, outcome: classifyChild(child, timeoutMs, nowMs), changesAtMs: null };
    const basis = {
      lease: gate.leases?.get(node.name),
      watch: gate.waves.get(wave),
      timeoutMs: gate.timeoutMs,
      fromMs: nowMs,
    };
    return { child, wave, ...judgeNode(child, node, wave, gate, nowMs), basis };
  };
  const { forwardAt, rollbackAt, busyAt, ...gone } = sortChildren(snapshot, order);
  const atTarget = versionMatcher(release.version);
  const reusable =
    last !== null && last.releaseKey === releaseKeyOf(release) && last.timeoutMs === timeoutMs ? last.fleet : null;
  const machines = order.entries.map((entry, index): Machine => {
    const { node } = entry;
    const forward = forwardAt[index] ?? null;
    const rollbackChild = rollbackAt[index] ?? null;
    const isBusy = busyAt[index] === true;
    const before = reusable?.machines[index];
    if (
      before !== undefined &&
      reusable?.order.entries[index]?.node === node &&
      before.busy === isBusy &&
      (before.forward?.child ?? null) === forward &&
      (before.rollback?.child ?? null) === rollbackChild &&
      (forward === null || !isLivePhase(forward.phase)) &&
      (rollbackChild === null || !isLivePhase(rollbackChild.phase)) &&
      // A Complete operation's outcome follows its Node, its Lease, its wave's times and the time.
      (forward?.phase !== 'Complete' || stillJudged(before.forward, gate, node, nowMs))
    )
      return before;
    const agentVersion = node.annotations[ANNOTATION_AGENT_VERSION] ?? null;
    return {
      name: node.name,
      uid: node.uid,
      labels: node.labels,
      agentVersion,
      key: entry.key,
      hash: entry.hash,
      childName: entry.childName,
      rollbackChildName: entry.rollbackChildName,
      forward: forward && classifyForward(forward, node),
      rollback: rollbackChild && { child: rollbackChild, outcome: classifyChild(rollbackChild, timeoutMs, nowMs) },
      exclusion: exclusionOf(node.labels, atTarget(agentVersion), isBusy, release),
      busy: isBusy,
    };
  });
  return { machines, order, ...gone };
}

/**
 * Whether the Node gate judges a machine: it is on and there is evidence to judge — Leases in the
 * snapshot, or a Ready condition on the Node. Without any, its verdict would be "succeeded" at any
 * instant (node-verdict.ts), so it is left out, and a plan costs what it did without the gate.
 */
function judged(gate: NodeGate | null, node: NodeFacts): gate is NodeGate {
  return gate !== null && (gate.leases !== null || node.ready !== undefined);
}

/**
 * Whether the Node gate would judge a Complete operation as it did (node-verdict.ts): the same
 * Node (checked by the caller), the same Lease object, the same times of its wave and timeout,
 * and an instant between the judgment and the next one at which time alone may change it.
 */
function stillJudged(before: ForwardChild | null, gate: NodeGate | null, node: NodeFacts, nowMs: number): boolean {
  if (before === null) return false;
  const basis = before.basis;
  if (gate === null || basis === undefined || !judged(gate, node)) return basis === undefined && !judged(gate, node);
  const watch = gate.waves.get(before.wave);
  return (
    basis.lease === gate.leases?.get(node.name) &&
    basis.timeoutMs === gate.timeoutMs &&
    basis.watch?.completedMs === watch?.completedMs &&
    basis.watch?.bakeUntilMs === watch?.bakeUntilMs &&
    nowMs >= basis.fromMs &&
    (before.changesAtMs === null || nowMs < before.changesAtMs)
  );
}

function exclusionOf(
  labels: Readonly<Record<string, string>>,
  atTarget: boolean,
  busy: boolean,
  release: ReleaseFacts,
): Exclusion | null {
  if (labels[LABEL_OPT_OUT] === 'true') return 'optedOut';
  if (atTarget) return 'alreadyAtTarget';
  if (busy) return 'conflict';
  if (release.artifacts !== null && !release.artifacts.some((artifact) => artifact.arch === labels[LABEL_ARCH])) {
    return 'noArtifact';
  }
  return null;
}
