/**
 * A small simulated cluster for the rollout planner: nodes, releases, the rollout object with a
 * resourceVersion, MachineOperations, and daemons that take their own operations and finish them
 * after a number of steps fixed when the operation is created. The planner's actions are applied
 * as the API server would (a status update with a stale resourceVersion is refused, a create of
 * an existing name is AlreadyExists, an identical status update writes nothing). Virtual time
 * advances by a fixed step.
 */
import type { RolloutAction, RolloutPlan } from '../../../src/domain/fleet/decide/actions.js';
import { fnv1a64 } from '../../../src/domain/fleet/order/fnv1a64.js';
import { jsonEqual } from '../../../src/domain/fleet/status/json-equal.js';
import { PlannerMemo } from '../../../src/domain/fleet/order/planner-memo.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import type {
  ChildOperation,
  LeaseFacts,
  NodeFacts,
  OperationPhase,
  ReleaseObject,
  RolloutSnapshot,
} from '../../../src/domain/fleet/order/snapshot.js';
import {
  ANNOTATION_AGENT_VERSION,
  LABEL_PURPOSE,
  LABEL_ROLLOUT,
  LABEL_WAVE,
} from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng } from '../../sim/harness/index.js';

export type Outcome = 'succeed' | 'DaemonFailed' | 'ExecutionFailed' | 'InvalidParameters' | 'hang' | 'never-start';

/** Decides, once per operation, what its daemon will do. */
export type Behaviour = (node: NodeFacts, purpose: string, prng: Prng) => Outcome;

export interface SimOperation {
  readonly name: string;
  readonly machineRef: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ownerUid: string | null;
  readonly version: string;
  readonly createdStep: number;
  readonly createdMs: number;
  readonly outcome: Outcome;
  readonly startAfterSteps: number;
  readonly finishAfterSteps: number;
  phase: OperationPhase | null;
  reason: string | null;
  message: string | null;
  startedMs: number | null;
  completedMs: number | null;
  /** Every status the daemon wrote, with its step, for snapshots that lag behind. */
  readonly history: { readonly step: number; readonly view: ChildOperation }[];
}

export interface CreateRecord {
  readonly step: number;
  readonly name: string;
  readonly wave: string;
  readonly purpose: string;
}

export const STEP_MS = 10_000;
export const START_MS = Date.UTC(2025, 0, 6, 12, 0, 0); // a Monday, noon UTC

export class RolloutWorld {
  step = 0;
  nowMs = START_MS;
  resourceVersion = 1;
  status: unknown = undefined;
  annotations: Record<string, string> = {};
  readonly operations = new Map<string, SimOperation>();
  readonly creates: CreateRecord[] = [];
  readonly events: RolloutAction[] = [];
  /** For each halt id: how many creates had happened when the status first recorded it. */
  readonly haltedAtCreate = new Map<string, number>();
  /** Operations that existed before the rollout: hand-made or another rollout's. */
  readonly foreign: { name: string; machineRef: string; phase: OperationPhase | null }[] = [];
  private readonly views = new WeakMap<SimOperation, ChildOperation>();
  /** The memo of the one controller the example tests plan with. */
  readonly memo = new PlannerMemo();
  /** The kubelets' Leases by Node name, for tests of the Node gate; `null`: the snapshot carries none. */
  leases: Map<string, LeaseFacts> | null = null;

  constructor(
    readonly seed: number,
    readonly name: string,
    public uid: string,
    public spec: Record<string, unknown>,
    readonly nodes: Map<string, NodeFacts>,
    readonly releases: Map<string, ReleaseObject>,
    readonly behaviour: Behaviour,
  ) {}

  /** The caches' view; with `lagSteps`, every operation's status as it was that many steps ago. */
  snapshot(lagSteps = 0): RolloutSnapshot {
    const spec = this.spec as { releaseRef?: { name?: string }; rollback?: { releaseRef?: { name?: string } } };
    return {
      rollout: {
        name: this.name,
        uid: this.uid,
        generation: 1,
        resourceVersion: String(this.resourceVersion),
        annotations: { ...this.annotations },
        spec: structuredClone(this.spec),
        status: structuredClone(this.status),
      },
      release: this.releases.get(spec.releaseRef?.name ?? '') ?? null,
      rollbackRelease: this.releases.get(spec.rollback?.releaseRef?.name ?? '') ?? null,
      nodes: [...this.nodes.values()],
      children: [...this.operations.values()]
        .filter((op) => op.labels[LABEL_ROLLOUT] === this.name)
        .map((op) => (lagSteps === 0 ? this.currentView(op) : laggedView(op, this.step - lagSteps))),
      foreignOperations: this.foreign.map((op) => ({ ...op })),
      ...(this.leases !== null && { leases: new Map(this.leases) }),
    };
  }

  /**
   * The operation as the caches hold it: the same object until the operation changes, as an
   * informer's cache does, so the planner's memo can tell what did not change.
   */
  private currentView(op: SimOperation): ChildOperation {
    const cached = this.views.get(op);
    if (
      cached !== undefined &&
      cached.phase === op.phase &&
      cached.reason === op.reason &&
      cached.message === op.message &&
      cached.startedMs === op.startedMs &&
      cached.completedMs === op.completedMs
    )
      return cached;
    const view = childView(op);
    this.views.set(op, view);
    return view;
  }

  /** Applies the actions of a plan in order, up to (not including) `stopAt`; returns whether the update held. */
  apply(plan: RolloutPlan, stopAt = plan.actions.length): boolean {
    for (const action of plan.actions.slice(0, stopAt)) {
      if (action.kind === 'UpdateRolloutStatus') {
        if (action.resourceVersion !== String(this.resourceVersion)) return false; // 409: drop the rest
        if (!jsonEqual(action.status, this.status)) {
          this.status = structuredClone(action.status);
          this.resourceVersion += 1;
          const halt = action.status.halt;
          if (halt !== undefined && !this.haltedAtCreate.has(halt.id))
            this.haltedAtCreate.set(halt.id, this.creates.length);
        }
      } else if (action.kind === 'CreateOperation') {
        this.create(action);
      } else if (action.kind === 'QuarantineRelease') {
        const release = this.releases.get(action.name);
        if (release !== undefined) {
          const spec = { ...(release.spec as object), quarantine: { ...action.quarantine } };
          this.releases.set(action.name, { ...release, spec, resourceVersion: `${release.resourceVersion}+` });
        }
      } else {
        this.events.push(action);
      }
    }
    return true;
  }

  private create(action: Extract<RolloutAction, { kind: 'CreateOperation' }>): void {
    const { metadata, spec } = action.operation;
    if (this.operations.has(metadata.name)) return; // AlreadyExists
    const node = this.nodes.get(spec.machineRef);
    const prng = new Prng(this.seed ^ Number.parseInt(fnv1a64(metadata.name).slice(0, 8), 16));
    const purpose = metadata.labels[LABEL_PURPOSE] ?? '';
    const outcome = node === undefined ? 'never-start' : this.behaviour(node, purpose, prng);
    this.operations.set(metadata.name, {
      name: metadata.name,
      machineRef: spec.machineRef,
      labels: metadata.labels,
      ownerUid: metadata.ownerReferences[0]?.uid ?? null,
      version: versionOfUrl(spec.parameters.downloadURL),
      createdStep: this.step,
      createdMs: this.nowMs,
      outcome,
      startAfterSteps: prng.between(0, 2),
      finishAfterSteps: prng.between(1, 4),
      phase: null,
      reason: null,
      message: null,
      startedMs: null,
      completedMs: null,
      history: [],
    });
    this.creates.push({ step: this.step, name: metadata.name, wave: metadata.labels[LABEL_WAVE] ?? '', purpose });
  }

  /** Every daemon moves its own operation on by what was decided when it was created. */
  runDaemons(): void {
    for (const op of [...this.operations.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (op.phase === 'Complete' || op.phase === 'Failed' || op.outcome === 'never-start') continue;
      if (!this.nodes.has(op.machineRef)) continue;
      const age = this.step - op.createdStep;
      if (op.phase !== 'InProgress' && age >= op.startAfterSteps) {
        if (op.outcome === 'InvalidParameters') {
          this.finish(op, 'Failed', 'InvalidParameters', 'the downloadURL parameter is not allowed');
          continue;
        }
        op.phase = 'InProgress';
        op.startedMs = this.nowMs;
        op.history.push({ step: this.step, view: childView(op) });
      } else if (
        op.phase === 'InProgress' &&
        op.outcome !== 'hang' &&
        age >= op.startAfterSteps + op.finishAfterSteps
      ) {
        if (op.outcome === 'succeed') this.finish(op, 'Complete', 'Succeeded', 'AgentUpgrade completed');
        else this.finish(op, 'Failed', op.outcome, `the agent failed (${op.outcome})`);
      }
    }
  }

  private finish(op: SimOperation, phase: 'Complete' | 'Failed', reason: string, message: string): void {
    op.phase = phase;
    op.reason = reason;
    op.message = message;
    op.completedMs = this.nowMs;
    op.history.push({ step: this.step, view: childView(op) });
    if (phase === 'Complete') {
      const node = this.nodes.get(op.machineRef);
      if (node !== undefined) {
        this.nodes.set(node.name, {
          ...node,
          annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: op.version },
        });
      }
    }
  }

  /** The rollout deleted and created again under its name: a new uid, no status yet. */
  renew(): void {
    this.uid = `${this.uid}-again`;
    this.status = undefined;
    this.resourceVersion += 1;
  }

  advance(): void {
    this.step += 1;
    this.nowMs += STEP_MS;
  }

  rolloutStatus(): AgentRolloutStatus | null {
    return (this.status as AgentRolloutStatus | undefined) ?? null;
  }
}

function childView(op: SimOperation): ChildOperation {
  return {
    name: op.name,
    machineRef: op.machineRef,
    labels: op.labels,
    ownerUid: op.ownerUid,
    phase: op.phase,
    reason: op.reason,
    message: op.message,
    createdMs: op.createdMs,
    startedMs: op.startedMs,
    completedMs: op.completedMs,
  };
}

function laggedView(op: SimOperation, step: number): ChildOperation {
  const seen = [...op.history].reverse().find((entry) => entry.step <= step);
  return (
    seen?.view ?? { ...childView(op), phase: null, reason: null, message: null, startedMs: null, completedMs: null }
  );
}

/** Fixture URLs carry the version: `https://releases.example.com/agent/<version>/agent-<arch>.tar.gz`. */
export function versionOfUrl(url: string): string {
  return /\/agent\/([^/]+)\//.exec(url)?.[1] ?? '';
}

export function isLive(op: SimOperation): boolean {
  return op.phase !== 'Complete' && op.phase !== 'Failed';
}
