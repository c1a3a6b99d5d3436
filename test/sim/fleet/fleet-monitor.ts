/**
 * The simulation's oracle: its own watches (an observer's credentials, not the controller's) on
 * MachineOperations and AgentRollouts, and the rules checked at every event they deliver:
 * no machine ever has two live AgentUpgrade operations; per wave, the operations in flight never
 * exceed the wave's maxInFlight, and failures never exceed its budget plus maxInFlight; the
 * rollout's live operations never exceed maxUnavailable; no forward operation is created after
 * the status that recorded a halt; the status stays under 64 KiB. The oracle computes from the
 * objects themselves and shares nothing with the planner but the rounding rule of a percentage.
 */
import { runInformer, type InformerParts } from '../../../src/adapters/fleet/kubernetes/informer.js';
import { OPERATIONS_PATH, ROLLOUTS_PATH } from '../../../src/adapters/fleet/kubernetes/resource-paths.js';

export const STATUS_MAX_BYTES = 64 * 1024;

export interface Child {
  readonly name: string;
  readonly machine: string;
  readonly rollout: string | null;
  readonly wave: string;
  readonly purpose: string;
  readonly phase: string | null;
  readonly reason: string | null;
  readonly createdRv: number;
}

interface RolloutView {
  readonly name: string;
  readonly resourceVersion: number;
  readonly spec: Record<string, unknown>;
  readonly status: Record<string, unknown> | null;
  readonly statusBytes: number;
}

export interface WaveRecord {
  live: number;
  failures: number;
  maxLive: number;
  capSeen: number;
  maxFailures: number;
  allowed: number;
}

export interface RolloutRecord {
  readonly waves: Map<string, WaveRecord>;
  maxUnavailable: number;
  unavailableCapSeen: number;
  /** The resourceVersion of the first status that recorded each halt. */
  readonly haltRv: Map<string, number>;
  readonly upgradeCreates: number[];
  readonly rollbackCreates: number[];
  maxStatusBytes: number;
}

const isLive = (phase: string | null): boolean => phase !== 'Complete' && phase !== 'Failed';

export class FleetMonitor {
  readonly children = new Map<string, Child>();
  readonly rollouts = new Map<string, RolloutView>();
  readonly records = new Map<string, RolloutRecord>();
  readonly violations: string[] = [];
  private readonly livePerMachine = new Map<string, number>();
  /** Per rollout and machine: its forward and rollback child (the rollback one is the latest). */
  private readonly latest = new Map<string, { upgrade?: Child; rollback?: Child }>();
  private readonly unavailable = new Map<string, number>();
  maxLivePerMachine = 0;
  eventsApplied = 0;

  constructor(private readonly parts: Omit<InformerParts, 'count'>) {}

  run(signal: AbortSignal): Promise<void> {
    const parts = { ...this.parts, count: () => undefined };
    return Promise.all([
      runInformer(
        parts,
        { resource: 'machineoperations', path: OPERATIONS_PATH, read: readChild },
        (event) => {
          if (event.type === 'replace') {
            const listed = new Set(event.objects.map((child) => child.name));
            for (const name of [...this.children.keys()]) if (!listed.has(name)) this.childChanged(name, null);
            for (const child of event.objects) this.childChanged(child.name, child);
          } else {
            this.eventsApplied += 1;
            this.childChanged(
              event.type === 'delete' ? event.name : event.object.name,
              event.type === 'delete' ? null : event.object,
            );
          }
        },
        signal,
      ),
      runInformer(
        parts,
        { resource: 'agentrollouts', path: ROLLOUTS_PATH, read: readRollout },
        (event) => {
          if (event.type === 'replace') for (const rollout of event.objects) this.rolloutChanged(rollout);
          else if (event.type === 'upsert') {
            this.eventsApplied += 1;
            this.rolloutChanged(event.object);
          } else this.eventsApplied += 1;
        },
        signal,
      ),
    ]).then(() => undefined);
  }

  record(rollout: string): RolloutRecord {
    let record = this.records.get(rollout);
    if (record === undefined) {
      record = {
        waves: new Map(),
        maxUnavailable: 0,
        unavailableCapSeen: 0,
        haltRv: new Map(),
        upgradeCreates: [],
        rollbackCreates: [],
        maxStatusBytes: 0,
      };
      this.records.set(rollout, record);
    }
    return record;
  }

  /** AgentUpgrade operations not finished yet, of any rollout or none. */
  liveOperations(): number {
    let live = 0;
    for (const count of this.livePerMachine.values()) live += count;
    return live;
  }

  /** Checks what can only be judged against the latest statuses (caps, budgets, creates after a halt). */
  checkAtInstant(): void {
    for (const [name, record] of this.records) {
      const rollout = this.rollouts.get(name);
      if (rollout === undefined) continue;
      for (const [wave, seen] of record.waves) {
        if (seen.maxLive > seen.capSeen)
          this.violate(`${name}/${wave}: ${seen.maxLive} in flight > maxInFlight ${seen.capSeen}`);
        if (seen.maxFailures > seen.allowed + seen.capSeen)
          this.violate(
            `${name}/${wave}: ${seen.maxFailures} failures > budget ${seen.allowed} + maxInFlight ${seen.capSeen}`,
          );
      }
      // A percentage cap shrinks with the population (machines found at the target, vanished);
      // what was in flight under the larger cap is never cancelled, so the largest one counts.
      const now = maxUnavailableCap(rollout);
      if (now !== null) record.unavailableCapSeen = Math.max(record.unavailableCapSeen, now);
      const cap = now === null ? null : record.unavailableCapSeen;
      if (cap !== null && record.maxUnavailable > cap)
        this.violate(`${name}: ${record.maxUnavailable} unavailable > maxUnavailable ${cap}`);
      for (const [id, rv] of record.haltRv) {
        const after = record.upgradeCreates.filter((created) => created > rv).length;
        if (after > 0) this.violate(`${name}: ${after} forward operations created after halt ${id}`);
      }
    }
  }

  private violate(text: string): void {
    if (this.violations.length < 50 && !this.violations.includes(text)) this.violations.push(text);
  }

  private childChanged(name: string, next: Child | null): void {
    const before = this.children.get(name);
    if (before !== undefined) this.count(before, -1);
    if (next === null) this.children.delete(name);
    else {
      this.children.set(name, next);
      this.count(next, +1);
      if (before === undefined && next.rollout !== null) {
        const record = this.record(next.rollout);
        (next.purpose === 'rollback' ? record.rollbackCreates : record.upgradeCreates).push(next.createdRv);
      }
    }
  }

  /** Adds (+1) or removes (−1) one child's part in every count, so each event costs O(1). */
  private count(child: Child, sign: 1 | -1): void {
    const live = isLive(child.phase);
    if (live) this.adjustMachine(child.machine, sign);
    if (child.rollout === null) return;
    const record = this.record(child.rollout);
    const slot = `${child.rollout}\u0000${child.machine}`;
    const before = this.latest.get(slot);
    const unavailableBefore =
      before !== undefined && isLive((before.rollback ?? before.upgrade)?.phase ?? 'Complete') ? 1 : 0;
    const entry = { ...before };
    if (child.purpose === 'rollback') entry.rollback = sign > 0 ? child : undefined;
    else entry.upgrade = sign > 0 ? child : undefined;
    this.latest.set(slot, entry);
    const unavailableAfter = isLive((entry.rollback ?? entry.upgrade)?.phase ?? 'Complete') ? 1 : 0;
    const unavailable = (this.unavailable.get(child.rollout) ?? 0) + unavailableAfter - unavailableBefore;
    this.unavailable.set(child.rollout, unavailable);
    record.maxUnavailable = Math.max(record.maxUnavailable, unavailable);
    if (child.purpose !== 'upgrade') return;
    const wave = this.wave(record, child.wave);
    if (live) {
      wave.live += sign;
      wave.maxLive = Math.max(wave.maxLive, wave.live);
    }
    if (child.phase === 'Failed') {
      wave.failures += sign;
      wave.maxFailures = Math.max(wave.maxFailures, wave.failures);
    }
  }

  private adjustMachine(machine: string, delta: number): void {
    const live = (this.livePerMachine.get(machine) ?? 0) + delta;
    this.livePerMachine.set(machine, live);
    if (live > this.maxLivePerMachine) this.maxLivePerMachine = live;
    if (live > 1) this.violate(`machine ${machine} has ${live} live operations`);
  }

  private wave(record: RolloutRecord, name: string): WaveRecord {
    let wave = record.waves.get(name);
    if (wave === undefined) {
      wave = { live: 0, failures: 0, maxLive: 0, capSeen: 0, maxFailures: 0, allowed: 0 };
      record.waves.set(name, wave);
    }
    return wave;
  }

  private rolloutChanged(rollout: RolloutView): void {
    this.rollouts.set(rollout.name, rollout);
    const record = this.record(rollout.name);
    record.maxStatusBytes = Math.max(record.maxStatusBytes, rollout.statusBytes);
    if (rollout.statusBytes > STATUS_MAX_BYTES) this.violate(`${rollout.name}: status of ${rollout.statusBytes} bytes`);
    const halt = rollout.status?.['halt'] as { id?: unknown } | undefined;
    if (typeof halt?.id === 'string' && !record.haltRv.has(halt.id))
      record.haltRv.set(halt.id, rollout.resourceVersion);
    const strategy = rollout.spec['strategy'] as { waves?: { name?: unknown; maxInFlight?: unknown }[] } | undefined;
    const waves = (rollout.status?.['waves'] ?? []) as {
      name: string;
      size: number;
      failureBudget: { allowed: number };
    }[];
    for (const wave of waves) {
      const spec = strategy?.waves?.find((entry) => entry.name === wave.name);
      const seen = this.wave(record, wave.name);
      seen.capSeen = Math.max(seen.capSeen, capOf(spec?.maxInFlight ?? '10%', wave.size));
      seen.allowed = Math.max(seen.allowed, wave.failureBudget.allowed);
    }
  }
}

/** An int or a percentage of `base`, rounded up, at least 1: how maxInFlight reads. */
export function capOf(amount: unknown, base: number): number {
  if (typeof amount === 'number') return Math.max(1, amount);
  const percent = typeof amount === 'string' && amount.endsWith('%') ? Number(amount.slice(0, -1)) : NaN;
  return Number.isFinite(percent) ? Math.max(1, Math.ceil((percent * base) / 100)) : 1;
}

function maxUnavailableCap(rollout: RolloutView): number | null {
  const amount = (rollout.spec['strategy'] as { maxUnavailable?: unknown } | undefined)?.maxUnavailable;
  if (amount === undefined) return null;
  const population = Number(String(rollout.status?.['progress'] ?? '0/0').split('/')[1]);
  if (typeof amount === 'number') return Math.max(1, amount);
  const percent = Number(String(amount).replace('%', ''));
  return Math.max(1, Math.floor((percent * population) / 100));
}

function readChild(raw: unknown): Child | null {
  const object = raw as {
    metadata?: { name?: string; labels?: Record<string, string>; resourceVersion?: string; creationTimestamp?: string };
    spec?: { machineRef?: string; operationKind?: string };
    status?: { phase?: string; conditions?: { type?: string; reason?: string }[] };
  } | null;
  const metadata = object?.metadata;
  if (metadata?.name === undefined || object?.spec?.operationKind !== 'AgentUpgrade') return null;
  const labels = metadata.labels ?? {};
  return {
    name: metadata.name,
    machine: object.spec.machineRef ?? '',
    rollout: labels['agent-upgrade.dev/rollout'] ?? null,
    wave: labels['agent-upgrade.dev/wave'] ?? '',
    purpose: labels['agent-upgrade.dev/purpose'] ?? 'upgrade',
    phase: object.status?.phase ?? null,
    reason: object.status?.conditions?.find((entry) => entry.type === 'Completed')?.reason ?? null,
    createdRv: Number(metadata.resourceVersion),
  };
}

function readRollout(raw: unknown): RolloutView | null {
  const object = raw as {
    metadata?: { name?: string; resourceVersion?: string };
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  } | null;
  if (object?.metadata?.name === undefined) return null;
  return {
    name: object.metadata.name,
    resourceVersion: Number(object.metadata.resourceVersion),
    spec: object.spec ?? {},
    status: object.status ?? null,
    statusBytes: object.status === undefined ? 0 : Buffer.byteLength(JSON.stringify(object.status)),
  };
}
