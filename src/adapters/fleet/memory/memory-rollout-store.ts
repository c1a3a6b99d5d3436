import { ClusterError } from '../../../domain/common/port-errors.js';
import type {
  RolloutObject,
  RolloutPatchOutcome,
  RolloutSpecPatch,
  RolloutStore,
} from '../../../ports/fleet/rollout-store.js';

export interface MemoryRolloutInput {
  readonly name: string;
  readonly spec: Readonly<Record<string, unknown>>;
  readonly status?: unknown;
}

/** A write the store records: which rollout, at which resourceVersion, with what. */
export interface RecordedPatch {
  readonly name: string;
  readonly resourceVersion: string;
  readonly patch: RolloutSpecPatch;
}

/**
 * AgentRollouts in memory, as the API server keeps them: every write bumps a cluster-wide
 * resourceVersion (and the generation, as a spec write does), a patch at a stale resourceVersion
 * is a conflict. `interfere` simulates another writer (the controller, a person) changing the
 * object right after the next read, `failNext` a refusal; `patches` records every accepted write.
 * The store applies no CEL rules: what the API server would refuse is the caller's to refuse first.
 */
export class MemoryRolloutStore implements RolloutStore {
  private readonly objects = new Map<string, RolloutObject>();
  private revision = 0;
  private readonly interferences: ((rollout: RolloutObject) => RolloutObject)[] = [];
  private readonly faults: ClusterError[] = [];
  readonly patches: RecordedPatch[] = [];
  reads = 0;
  closed = 0;

  constructor(rollouts: readonly MemoryRolloutInput[] = []) {
    for (const rollout of rollouts) this.put(rollout);
  }

  /** Creates or replaces a rollout (a new resourceVersion). */
  put(input: MemoryRolloutInput): RolloutObject {
    const previous = this.objects.get(input.name);
    const rollout: RolloutObject = {
      name: input.name,
      resourceVersion: this.nextRevision(),
      generation: (previous?.generation ?? 0) + 1,
      spec: { state: 'Preview', ...input.spec },
      status: input.status ?? null,
    };
    this.objects.set(input.name, rollout);
    return rollout;
  }

  /** The rollout as stored now, or undefined. */
  peek(name: string): RolloutObject | undefined {
    return this.objects.get(name);
  }

  delete(name: string): void {
    this.objects.delete(name);
  }

  /** After each of the next reads, another writer changes the object (a new resourceVersion). */
  interfere(times: number, change: (rollout: RolloutObject) => RolloutObject = (rollout) => rollout): void {
    for (let i = 0; i < times; i += 1) this.interferences.push(change);
  }

  /** The next call fails with this error. */
  failNext(error: ClusterError): void {
    this.faults.push(error);
  }

  async get(name: string): Promise<RolloutObject | null> {
    this.throwFault();
    this.reads += 1;
    const rollout = this.objects.get(name) ?? null;
    const change = this.interferences.shift();
    if (rollout !== null && change !== undefined) {
      this.objects.set(name, { ...change(rollout), resourceVersion: this.nextRevision() });
    }
    return rollout;
  }

  async patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome> {
    this.throwFault();
    const rollout = this.objects.get(name);
    if (rollout === undefined) return { kind: 'not-found' };
    if (rollout.resourceVersion !== resourceVersion) return { kind: 'conflict' };
    const updated: RolloutObject = {
      ...rollout,
      resourceVersion: this.nextRevision(),
      generation: (rollout.generation ?? 0) + 1,
      spec: { ...rollout.spec, ...patch },
    };
    this.objects.set(name, updated);
    this.patches.push({ name, resourceVersion, patch });
    return { kind: 'patched', rollout: updated };
  }

  close(): void {
    this.closed += 1;
  }

  private throwFault(): void {
    const fault = this.faults.shift();
    if (fault !== undefined) throw fault;
  }

  private nextRevision(): string {
    this.revision += 1;
    return String(this.revision);
  }
}

/** A refusal as the API server answers it, for `failNext`. */
export function clusterRefusal(status: number | null): ClusterError {
  return new ClusterError(status, status === null ? 'the API server cannot be reached' : `answered ${status}`);
}
