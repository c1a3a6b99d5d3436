/**
 * One simulated rollout from start to end, with the oracle watching: the world, the faults the
 * run injects (conflicts, throttling and server errors on a share of requests, dropped watches,
 * vanishing machines, whose running operations the upstream controller then fails as
 * MachineNotFound, operations deleted by hand) and what the run measured.
 */
import { OPERATIONS_PATH, ROLLOUTS_PATH } from '../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { loadWatchClient } from '../../../src/adapters/common/kubernetes/kube-watch.js';
import { UnauthorizedStreak } from '../../../src/adapters/common/kubernetes/unauthorized-streak.js';
import type { ControllerMetrics } from '../../../src/ports/fleet/controller-metrics.js';
import { Prng } from '../harness/index.js';
import type { KillPlan } from './crashable-ports.js';
import type { FleetMachine } from './fleet-daemons.js';
import { FleetMonitor } from './fleet-monitor.js';
import {
  behaviourOf,
  createReleases,
  createRollout,
  TIMINGS,
  versionOfUrl,
  type FailureMode,
} from './fleet-scenarios.js';
import { FleetWorld } from './fleet-world.js';
import { informerSettings, WarningLog } from './fleet-parts.js';

export interface FaultPlan {
  /** Share of controller and daemon writes answered 409, 429 or 500 (each a third). */
  readonly writeFaultShare: number;
  /** Every this long (virtual), every watch is dropped. */
  readonly watchDropEveryMs: number | null;
  readonly vanish: number;
  readonly deleteByHand: number;
}

export const NO_FAULTS: FaultPlan = { writeFaultShare: 0, watchDropEveryMs: null, vanish: 0, deleteByHand: 0 };

export interface RunPlan {
  readonly seed: number;
  readonly machines: readonly FleetMachine[];
  readonly failures: FailureMode;
  readonly rollouts: readonly {
    readonly name: string;
    readonly spec: Record<string, unknown>;
    readonly afterMs?: number;
  }[];
  /** What a person changes in a rollout's spec (a merge patch) once `afterMs` of the run has passed. */
  readonly changes?: readonly {
    readonly name: string;
    readonly afterMs: number;
    readonly spec: Record<string, unknown>;
  }[];
  readonly faults: FaultPlan;
  readonly kills?: readonly KillPlan[];
  /** Virtual time the run may take at most. */
  readonly limitMs: number;
  readonly metrics?: ControllerMetrics;
  /** Kubelets renew their Nodes' Leases after each upgrade, as each machine's `kubelet` says. */
  readonly kubelets?: boolean;
}

export interface RunResult {
  readonly world: FleetWorld;
  readonly monitor: FleetMonitor;
  /** The rollouts' statuses at the end, by name. */
  readonly statuses: Map<string, Record<string, unknown>>;
  readonly virtualMs: number;
  readonly realMs: number;
  readonly instants: number;
}

const TERMINAL = ['Succeeded', 'Halted', 'RolledBack', 'Failed', 'Aborted'];
/**
 * The controller plans a change a moment after it (its settle delay, 250 ms): a run ends once its
 * end has held this long, so the statuses read then include the plan of the last change.
 */
const END_HELD_MS = 1_000;

/** Runs the plan to its end (every rollout terminal and nothing in flight) and keeps the world open. */
export async function runFleet(plan: RunPlan): Promise<RunResult> {
  const startedMs = performance.now();
  const world = await FleetWorld.start({
    seed: plan.seed,
    machines: plan.machines.map((machine) => ({ ...machine, labels: { ...machine.labels } })),
    behaviour: behaviourOf(plan.failures),
    timings: TIMINGS,
    versionOf: versionOfUrl,
    ...(plan.kills === undefined ? {} : { kills: plan.kills }),
    ...(plan.metrics === undefined ? {} : { metrics: plan.metrics }),
    ...(plan.kubelets === true && { kubelets: true }),
  });
  const monitor = new FleetMonitor({
    http: world.admin,
    WatchClient: await loadWatchClient(),
    clock: world.clock,
    logger: new WarningLog(),
    streak: new UnauthorizedStreak({ attempts: 5, windowMs: 180_000 }, world.clock),
    settings: informerSettings(new Prng(plan.seed + 3)),
  });
  const stopMonitor = new AbortController();
  void monitor.run(stopMonitor.signal).catch(() => undefined);
  world.onClose(() => stopMonitor.abort());
  world.observe(() => monitor.eventsApplied);
  await createReleases(world);
  const faults = new FaultInjector(world, monitor, plan.faults, new Prng(plan.seed + 7));
  let instants = 0;
  await world.startController();
  const startMs = world.clock.nowMs();
  const script = new RunScript(plan, world, startMs);
  let endedSinceMs: number | null = null;
  await world.runUntil(
    async () => {
      if (!script.finished) return false;
      const statuses = await readStatuses(world);
      const ended =
        plan.rollouts.every((rollout) => TERMINAL.includes(String(statuses.get(rollout.name)?.['phase']))) &&
        monitor.liveOperations() === 0;
      endedSinceMs = ended ? (endedSinceMs ?? world.clock.nowMs()) : null;
      return endedSinceMs !== null && world.clock.nowMs() - endedSinceMs >= END_HELD_MS;
    },
    plan.limitMs,
    async () => {
      instants += 1;
      monitor.checkAtInstant();
      await script.atInstant();
      await faults.atInstant();
    },
  );
  monitor.checkAtInstant();
  return {
    world,
    monitor,
    statuses: await readStatuses(world),
    virtualMs: world.clock.nowMs() - startMs,
    realMs: performance.now() - startedMs,
    instants,
  };
}

async function readStatuses(world: FleetWorld): Promise<Map<string, Record<string, unknown>>> {
  const list = (await world.get(ROLLOUTS_PATH)) as {
    items?: { metadata: { name: string }; status?: Record<string, unknown> }[];
  };
  return new Map((list.items ?? []).map((item) => [item.metadata.name, item.status ?? {}]));
}

/** The person's part of a run: each rollout created, and each spec change made, when its time comes. */
class RunScript {
  private readonly created = new Set<string>();
  private readonly changed = new Set<number>();

  constructor(
    private readonly plan: RunPlan,
    private readonly world: FleetWorld,
    private readonly startMs: number,
  ) {}

  get finished(): boolean {
    return this.created.size === this.plan.rollouts.length && this.changed.size === (this.plan.changes ?? []).length;
  }

  async atInstant(): Promise<void> {
    const elapsedMs = this.world.clock.nowMs() - this.startMs;
    for (const rollout of this.plan.rollouts) {
      if (this.created.has(rollout.name) || elapsedMs < (rollout.afterMs ?? 0)) continue;
      this.created.add(rollout.name);
      await createRollout(this.world, rollout.name, rollout.spec);
    }
    for (const [index, change] of (this.plan.changes ?? []).entries()) {
      if (this.changed.has(index) || elapsedMs < change.afterMs) continue;
      this.changed.add(index);
      await this.world.patch(`${ROLLOUTS_PATH}/${change.name}`, { spec: change.spec });
    }
  }
}

/** Faults at settled instants: request failures armed for what comes next, watch drops, vanishing machines, deletions. */
class FaultInjector {
  private lastDropMs: number;
  private writesSeen = 0;
  private faultCredit = 0;
  private vanished = 0;
  private deleted = 0;

  constructor(
    private readonly world: FleetWorld,
    private readonly monitor: FleetMonitor,
    private readonly plan: FaultPlan,
    private readonly prng: Prng,
  ) {
    this.lastDropMs = world.clock.nowMs();
  }

  async atInstant(): Promise<void> {
    const { world, plan, prng } = this;
    // About writeFaultShare of the writes are refused: as many as that share of the writes made
    // since the last instant, armed for the writes that come next.
    const writes =
      world.fake.requestCount({ method: 'POST' }) +
      world.fake.requestCount({ method: 'PUT' }) +
      world.fake.requestCount({ method: 'PATCH' });
    this.faultCredit += (writes - this.writesSeen) * plan.writeFaultShare;
    this.writesSeen = writes;
    for (; this.faultCredit >= 1; this.faultCredit -= 1) {
      const status = [409, 429, 500][prng.int(3)] as number;
      world.fake.failNext({ method: ['POST', 'PUT', 'PATCH'][prng.int(3)] as string }, { status });
    }
    if (plan.watchDropEveryMs !== null && world.clock.nowMs() - this.lastDropMs >= plan.watchDropEveryMs) {
      this.lastDropMs = world.clock.nowMs();
      world.fake.dropWatches();
    }
    if (this.vanished < plan.vanish && prng.chance(0.05)) {
      const machine = [...world.machines.values()][prng.int(world.machines.size)] as FleetMachine;
      if (!machine.vanished) {
        machine.vanished = true;
        world.fake.deleteNode(machine.name);
        this.vanished += 1;
        await this.failGone(machine.name);
      }
    }
    if (this.deleted < plan.deleteByHand && prng.chance(0.05)) {
      const live = [...this.monitor.children.values()].filter((child) => child.phase === 'InProgress');
      const victim = live[prng.int(Math.max(1, live.length))];
      if (victim !== undefined) {
        world.fake.delete(victim.name);
        this.deleted += 1;
      }
    }
  }

  /** What the upstream controller does to the operations of a machine that is gone: fails them, MachineNotFound. */
  private async failGone(machine: string): Promise<void> {
    const at = new Date(this.world.clock.nowMs()).toISOString();
    const message = 'the machine is gone';
    for (const child of this.monitor.children.values()) {
      if (child.machine !== machine || child.phase === 'Complete' || child.phase === 'Failed') continue;
      const completed = {
        type: 'Completed',
        status: 'False',
        reason: 'MachineNotFound',
        message,
        lastTransitionTime: at,
      };
      await this.world.patch(`${OPERATIONS_PATH}/${child.name}/status`, {
        status: { phase: 'Failed', message, completedAt: at, conditions: [completed] },
      });
    }
  }
}
