import { selectorMatches } from '../machine-selector.js';
import { compareVersions, parseVersion } from '../version.js';
import { classifyChild, type ChildOutcome } from './classify-child.js';
import { stableHash64 } from './mix64.js';
import type { Artifact } from './release-spec.js';
import type { AgentRolloutSpec } from './rollout-spec.js';
import { isLivePhase, type ChildOperation, type RolloutSnapshot } from './snapshot.js';
import { ANNOTATION_AGENT_VERSION, LABEL_ARCH, LABEL_OPT_OUT, LABEL_PURPOSE, LABEL_WAVE } from './vocabulary.js';

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
  readonly forward: (ClassifiedChild & { readonly wave: string }) | null;
  readonly rollback: ClassifiedChild | null;
  /** Why a machine without a forward child would not get one now; `null`: it would. */
  readonly exclusion: Exclusion | null;
  /** Another live operation (another rollout's or a hand-made one) holds the machine. */
  readonly busy: boolean;
}

export interface Fleet {
  /** The targets, in rollout order. */
  readonly machines: readonly Machine[];
  readonly byName: ReadonlyMap<string, Machine>;
  /** Per wave label, the machine hashes of the forward children whose machine left the targets. */
  readonly goneChildrenByWave: ReadonlyMap<string, readonly string[]>;
  /** Machines with a child of this rollout that are no longer targets. */
  readonly goneMachines: number;
  readonly goneRollbackChildren: number;
}

/** 48 bits of the machine name's hash: names stay short and 10,000 machines collide with odds of 1 in 5 million. */
const machineHash = (machineName: string): string => stableHash64(machineName).slice(0, 12);

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

export function buildFleet(
  snapshot: RolloutSnapshot,
  spec: AgentRolloutSpec,
  release: ReleaseFacts,
  nowMs: number,
): Fleet {
  const { rollout } = snapshot;
  const timeoutMs = spec.strategy.operationTimeoutMs;
  const owned = snapshot.children.filter((child) => child.ownerUid === rollout.uid);
  const busy = new Set<string>(
    [...snapshot.foreignOperations, ...snapshot.children.filter((child) => child.ownerUid !== rollout.uid)]
      .filter((operation) => isLivePhase(operation.phase))
      .map((operation) => operation.machineRef),
  );
  const targets = new Map(
    snapshot.nodes
      .filter((node) => selectorMatches(spec.targets.selector, node.labels))
      .map((node) => [node.name, node]),
  );
  const forwardByMachine = pickChildren(owned, 'upgrade', (name) => childNameFor(rollout.name, name));
  const rollbackByMachine = pickChildren(owned, 'rollback', (name) => rollbackChildNameFor(rollout.name, name));
  const atTarget = versionMatcher(release.version);
  const machines: Machine[] = [...targets.values()].map((node) => {
    const nameHash = machineHash(node.name);
    const forward = forwardByMachine.get(node.name) ?? null;
    const rollbackChild = rollbackByMachine.get(node.name) ?? null;
    const agentVersion = node.annotations[ANNOTATION_AGENT_VERSION] ?? null;
    const labels = node.labels;
    return {
      name: node.name,
      uid: node.uid,
      labels,
      agentVersion,
      key: stableHash64(`${rollout.uid}/${node.uid}`),
      hash: nameHash,
      childName: `${rollout.name}-${nameHash}`,
      rollbackChildName: `${rollout.name}-rb-${nameHash}`,
      forward: forward && {
        child: forward,
        wave: forward.labels[LABEL_WAVE] ?? '',
        outcome: classifyChild(forward, timeoutMs, nowMs),
      },
      rollback: rollbackChild && { child: rollbackChild, outcome: classifyChild(rollbackChild, timeoutMs, nowMs) },
      exclusion: exclusionOf(labels, atTarget(agentVersion), busy.has(node.name), release),
      busy: busy.has(node.name),
    };
  });
  // Sorted by the first 52 bits of the key as a number (exact in a double), then by name.
  const ranked = machines.map((machine) => ({ machine, rank: Number.parseInt(machine.key.slice(0, 13), 16) }));
  ranked.sort((a, b) => a.rank - b.rank || (a.machine.name < b.machine.name ? -1 : 1));
  machines.splice(0, machines.length, ...ranked.map((entry) => entry.machine));
  return { machines, byName: new Map(machines.map((machine) => [machine.name, machine])), ...gone(owned, targets) };
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

/** One child per machine and purpose; the expected name wins over a copy made by hand. */
function pickChildren(
  owned: readonly ChildOperation[],
  purpose: 'upgrade' | 'rollback',
  expectedName: (machine: string) => string,
): Map<string, ChildOperation> {
  const chosen = new Map<string, ChildOperation>();
  const sorted = owned
    .filter((child) => (child.labels[LABEL_PURPOSE] === 'rollback') === (purpose === 'rollback'))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const child of sorted) {
    const current = chosen.get(child.machineRef);
    if (current === undefined || child.name === expectedName(child.machineRef)) chosen.set(child.machineRef, child);
  }
  return chosen;
}

function gone(
  owned: readonly ChildOperation[],
  targets: ReadonlyMap<string, unknown>,
): Pick<Fleet, 'goneChildrenByWave' | 'goneMachines' | 'goneRollbackChildren'> {
  const goneChildrenByWave = new Map<string, string[]>();
  const goneMachines = new Set<string>();
  let goneRollbackChildren = 0;
  for (const child of owned) {
    if (targets.has(child.machineRef)) continue;
    goneMachines.add(child.machineRef);
    if (child.labels[LABEL_PURPOSE] === 'rollback') {
      goneRollbackChildren += 1;
    } else {
      const wave = child.labels[LABEL_WAVE] ?? '';
      const hashes = goneChildrenByWave.get(wave) ?? [];
      hashes.push(machineHash(child.machineRef));
      goneChildrenByWave.set(wave, hashes);
    }
  }
  return { goneChildrenByWave, goneMachines: goneMachines.size, goneRollbackChildren };
}
