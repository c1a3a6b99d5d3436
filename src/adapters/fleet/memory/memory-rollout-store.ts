import { ClusterError } from '../../../domain/common/port-errors.js';
import type {
  ReleaseObject,
  ReleasePatchOutcome,
  ReleaseQuarantine,
  RolloutObject,
  RolloutPatchOutcome,
  RolloutSpecPatch,
  RolloutStore,
} from '../../../ports/fleet/rollout-store.js';

export interface MemoryRolloutInput {
  readonly name: string;
  readonly spec: Readonly<Record<string, unknown>>;
  readonly status?: unknown;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A write the store records: which object, at which resourceVersion, with what. */
export interface RecordedPatch {
  readonly name: string;
  readonly resourceVersion: string;
  readonly patch: RolloutSpecPatch | { readonly annotations: Readonly<Record<string, string>> } | ReleaseQuarantine;
}

/** When every rollout of this store was created: a fixed instant, 3 days before the memory clock's epoch. */
const CREATED_AT = '2024-12-29T00:00:00Z';

/**
 * AgentRollouts in memory, as the API server keeps them: every write bumps a cluster-wide
 * resourceVersion (and the generation, as a spec write does), a patch at a stale resourceVersion
 * is a conflict. `interfere` simulates another writer (the controller, a person) changing the
 * object right after the next read, `failNext` a refusal; `patches` records every accepted write.
 * The store applies no CEL rules: what the API server would refuse is the caller's to refuse first.
 */
export class MemoryRolloutStore implements RolloutStore {
  private readonly objects = new Map<string, RolloutObject>();
  private readonly releases = new Map<string, ReleaseObject>();
  private revision = 0;
  private readonly interferences: ((rollout: RolloutObject) => RolloutObject)[] = [];
  private readonly releaseInterferences: ((spec: ReleaseObject['spec']) => ReleaseObject['spec'])[] = [];
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
      annotations: input.annotations ?? {},
      createdAt: CREATED_AT,
      spec: { state: 'Preview', ...input.spec },
      status: input.status ?? null,
    };
    this.objects.set(input.name, rollout);
    return rollout;
  }

  /** Creates or replaces a release (a new resourceVersion). */
  putRelease(name: string, spec: Readonly<Record<string, unknown>>): ReleaseObject {
    const release: ReleaseObject = { name, resourceVersion: this.nextRevision(), spec };
    this.releases.set(name, release);
    return release;
  }

  peekRelease(name: string): ReleaseObject | undefined {
    return this.releases.get(name);
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

  /** After the next read of a release, another writer (a halting controller, a person) changes its spec. */
  interfereRelease(change: (spec: ReleaseObject['spec']) => ReleaseObject['spec']): void {
    this.releaseInterferences.push(change);
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

  async list(): Promise<readonly RolloutObject[]> {
    this.throwFault();
    this.reads += 1;
    return [...this.objects.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome> {
    return this.patchRollout(name, resourceVersion, patch, (rollout) => ({
      generation: (rollout.generation ?? 0) + 1,
      spec: { ...rollout.spec, ...patch },
    }));
  }

  /** Annotations are metadata: the generation stays, as the API server keeps it. */
  async annotate(
    name: string,
    resourceVersion: string,
    annotations: Readonly<Record<string, string>>,
  ): Promise<RolloutPatchOutcome> {
    return this.patchRollout(name, resourceVersion, { annotations }, (rollout) => ({
      annotations: { ...rollout.annotations, ...annotations },
    }));
  }

  async getRelease(name: string): Promise<ReleaseObject | null> {
    this.throwFault();
    this.reads += 1;
    const release = this.releases.get(name) ?? null;
    const change = this.releaseInterferences.shift();
    if (release !== null && change !== undefined) this.putRelease(name, change(release.spec));
    return release;
  }

  async quarantineRelease(
    name: string,
    resourceVersion: string,
    quarantine: ReleaseQuarantine,
  ): Promise<ReleasePatchOutcome> {
    this.throwFault();
    const release = this.releases.get(name);
    if (release === undefined) return { kind: 'not-found' };
    if (release.resourceVersion !== resourceVersion) return { kind: 'conflict' };
    const updated = { ...release, resourceVersion: this.nextRevision(), spec: { ...release.spec, quarantine } };
    this.releases.set(name, updated);
    this.patches.push({ name, resourceVersion, patch: quarantine });
    return { kind: 'patched', release: updated };
  }

  close(): void {
    this.closed += 1;
  }

  private patchRollout(
    name: string,
    resourceVersion: string,
    patch: RecordedPatch['patch'],
    change: (rollout: RolloutObject) => Partial<RolloutObject>,
  ): RolloutPatchOutcome {
    this.throwFault();
    const rollout = this.objects.get(name);
    if (rollout === undefined) return { kind: 'not-found' };
    if (rollout.resourceVersion !== resourceVersion) return { kind: 'conflict' };
    const updated: RolloutObject = { ...rollout, ...change(rollout), resourceVersion: this.nextRevision() };
    this.objects.set(name, updated);
    this.patches.push({ name, resourceVersion, patch });
    return { kind: 'patched', rollout: updated };
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
