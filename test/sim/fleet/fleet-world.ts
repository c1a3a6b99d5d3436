/**
 * A simulated fleet over the project's fake API server: N Nodes, releases and rollouts, the
 * simulated node daemons, and controller processes built by the production composition
 * (createController over connectController: the real informers, writes and leader election),
 * all on one virtual clock. Time moves only when the whole system has settled: no request is
 * unanswered, no watch event is on its way, and the controller has nothing queued.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectController } from '../../../src/adapters/fleet/kubernetes/connect-controller.js';
import { loadWatchClient } from '../../../src/adapters/common/kubernetes/kube-watch.js';
import { connectKubeHttp } from '../../../src/adapters/common/kubernetes/kube-connection.js';
import type { KubeHttp } from '../../../src/adapters/common/kubernetes/kube-http.js';
import { UnauthorizedStreak } from '../../../src/adapters/common/kubernetes/unauthorized-streak.js';
import { createController } from '../../../src/app/fleet/composition/create-controller.js';
import type { RolloutController } from '../../../src/app/fleet/controller/rollout-controller.js';
import type { ControllerMetrics } from '../../../src/ports/fleet/controller-metrics.js';
import { informerSettings, NO_METRICS, seededUids, WarningLog } from './fleet-parts.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../support/kube/kubeconfig-builder.js';
import { Prng } from '../harness/index.js';
import { CrashableProcess, type KillPlan, WriteCounter } from './crashable-ports.js';
import { FleetClock } from './fleet-clock.js';
import {
  FleetDaemons,
  SIM_LEASE_SECONDS,
  type DaemonOutcome,
  type DaemonTimings,
  type FleetMachine,
} from './fleet-daemons.js';

export const START_MS = Date.UTC(2025, 0, 6, 12, 0, 0);
export const TOKENS = { controller: 'controller-token', daemons: 'daemons-token', admin: 'admin-token' } as const;
export const SETTLE_ROUNDS_MAX = 200_000;
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** A Lease's MicroTime: RFC 3339 with six fractional digits. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

export interface FleetOptions {
  readonly seed: number;
  readonly machines: readonly FleetMachine[];
  readonly behaviour: (machine: FleetMachine, targetVersion: string) => DaemonOutcome;
  readonly timings: DaemonTimings;
  readonly versionOf: (downloadURL: string) => string;
  readonly kills?: readonly KillPlan[];
  readonly metrics?: ControllerMetrics;
  /** Every Node has a kubelet Lease in kube-node-lease, renewed after each upgrade (FleetMachine.kubelet). */
  readonly kubelets?: boolean;
}

interface WorldParts {
  readonly fake: FakeApiServer;
  readonly admin: KubeHttp;
  readonly daemons: FleetDaemons;
  readonly clock: FleetClock;
  readonly machines: Map<string, FleetMachine>;
  readonly dir: string;
}

export class FleetWorld {
  readonly counter = new WriteCounter();
  readonly prng: Prng;
  readonly fake: FakeApiServer;
  readonly admin: KubeHttp;
  readonly daemons: FleetDaemons;
  readonly clock: FleetClock;
  readonly machines: Map<string, FleetMachine>;
  /** Warnings and errors of the controller processes, bounded, for a failing run's report. */
  readonly logger = new WarningLog();
  private readonly dir: string;
  restarts = 0;
  private readonly stops: AbortController[] = [];
  private readonly closers: (() => void)[] = [];
  private readonly observers: (() => number)[] = [];
  private process: { crash: CrashableProcess; controller: RolloutController; done: Promise<void> } | null = null;
  private readonly kills: KillPlan[];

  private constructor(
    parts: WorldParts,
    private readonly options: FleetOptions,
  ) {
    ({ fake: this.fake, admin: this.admin, daemons: this.daemons, clock: this.clock } = parts);
    ({ machines: this.machines, dir: this.dir } = parts);
    this.prng = new Prng(options.seed);
    this.kills = [...(options.kills ?? [])].sort((a, b) => a.atWrite - b.atWrite);
  }

  static async start(options: FleetOptions): Promise<FleetWorld> {
    const clock = new FleetClock(START_MS);
    const fake = await startFakeApiServer({
      tokens: Object.values(TOKENS),
      recordRequestBodies: false,
      historyLimit: 20_000,
      namespaces: ['agent-upgrade-system', NODE_LEASE_NAMESPACE],
      bookmarkIntervalMs: 3_600_000,
      now: () => clock.nowMs(),
      // The rollout's machine order hashes uids: seeded uids make a run replayable from its seed.
      uid: seededUids(options.seed),
    });
    const dir = mkdtempSync(join(tmpdir(), 'fleet-'));
    const kubeconfig = (who: keyof typeof TOKENS): string =>
      writeKubeconfigFile(
        join(dir, `${who}.yaml`),
        kubeconfigDocument({ server: fake.origin }, { token: TOKENS[who] }),
      );
    for (const machine of options.machines)
      fake.setNode(machine.name, { ...machine.labels }, { 'agent-upgrade.dev/agent-version': machine.version });
    const renewLease = (machine: FleetMachine, durationSeconds: number, aheadMs = 0): void =>
      void fake.setLease(NODE_LEASE_NAMESPACE, machine.name, {
        holderIdentity: machine.name,
        leaseDurationSeconds: durationSeconds,
        renewTime: microTime(clock.nowMs() + aheadMs),
      });
    if (options.kubelets === true) for (const machine of options.machines) renewLease(machine, SIM_LEASE_SECONDS);
    const admin = await connectKubeHttp(kubeconfig('admin'));
    const daemonHttp = await connectKubeHttp(kubeconfig('daemons'));
    kubeconfig('controller');
    const machines = new Map(options.machines.map((machine) => [machine.name, machine]));
    const daemons = new FleetDaemons({
      http: daemonHttp,
      informer: {
        http: daemonHttp,
        WatchClient: await loadWatchClient(),
        clock,
        logger: new WarningLog(),
        streak: new UnauthorizedStreak({ attempts: 5, windowMs: 180_000 }, clock),
        settings: informerSettings(new Prng(options.seed + 1)),
      },
      clock,
      machines,
      versionOf: options.versionOf,
      behaviour: options.behaviour,
      timings: options.timings,
      ...(options.kubelets === true && { renewLease }),
    });
    const world = new FleetWorld({ fake, admin, daemons, clock, machines, dir }, options);
    const stop = new AbortController();
    world.stops.push(stop);
    void daemons.run(stop.signal).catch(() => undefined);
    return world;
  }

  /** Creates an object as `kubectl create` would (the admin's credentials). */
  async create(path: string, body: object): Promise<unknown> {
    return this.admin.call('POST', path, { body });
  }

  async patch(path: string, body: object): Promise<unknown> {
    return this.admin.call('PATCH', path, { body, contentType: 'application/merge-patch+json' });
  }

  async get(path: string): Promise<unknown> {
    return this.admin.call('GET', path);
  }

  /** Starts a controller process (the previous one must be dead or stopped). */
  async startController(identity = 'controller-0'): Promise<void> {
    const crash = new CrashableProcess(this.counter, this.kills, () => {
      this.restarts += 1;
    });
    const ports = await connectController({
      kubeconfig: join(this.dir, 'controller.yaml'),
      leaseNamespace: 'agent-upgrade-system',
      leaseName: 'agent-upgrade-controller',
      eventsNamespace: 'default',
      identity,
      clock: this.clock,
      logger: this.logger,
      metrics: this.options.metrics ?? NO_METRICS,
      informers: informerSettings(new Prng(this.prng.nextUint32())),
    });
    const controller = createController({
      settings: {
        // Longer than the defaults (15 s, 10 s, 2 s): the same election with fewer renewals to
        // simulate; a killed controller restarts under its own identity and leads again at once.
        leader: { identity, leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 10_000 },
        loop: {
          resyncMs: 300_000,
          retryDelayMs: 1_000,
          retryDelayMaxMs: 60_000,
          settleMs: 250,
          // A process dies once: kills planned at two creates of one batch would be one crash, so
          // runs with planned kills send creates one at a time (batches: test/app/controller).
          ...((this.options.kills ?? []).length > 0 ? { createBatchMax: 1 } : {}),
        },
      },
      logger: this.logger,
      ports: {
        cluster: crash.cluster(ports.cluster),
        leases: crash.leases(ports.leases),
        metrics: this.options.metrics ?? NO_METRICS,
        clock: this.clock,
      },
    });
    const done = controller
      .run(crash.stop.signal)
      .then(
        () => undefined,
        (error: unknown) => {
          if (!crash.killed) throw error;
        },
      )
      .finally(() => ports.cluster.close());
    this.process = { crash, controller, done };
  }

  get controllerKilled(): boolean {
    return this.process?.crash.killed ?? true;
  }

  /** Whether the controller has nothing to do right now (queue empty, caches filled, or not leading). */
  private controllerIdle(): boolean {
    const loop = this.process?.controller.loop;
    return loop === null || loop === undefined || loop.idle;
  }

  /**
   * Lets everything that can run at this instant run: until no request is unanswered, the daemons
   * write nothing, the controller is idle, and neither the server's counts of requests and watch
   * events nor any consumer's count of events applied moves for four turns of the event loop
   * and a few milliseconds (an event written to a socket is read on a later turn).
   */
  async settle(): Promise<void> {
    let stable = 0;
    let last = '';
    for (let round = 0; round < SETTLE_ROUNDS_MAX; round += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      if (round % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 1));
      const quiet = this.fake.inFlightRequests() === 0 && this.daemons.writesInFlight === 0 && this.controllerIdle();
      const signature = [
        this.fake.watchEventsSent(),
        this.fake.requestCount(),
        this.daemons.eventsApplied,
        this.process?.controller.loop?.cache.eventsApplied ?? -1,
        ...this.observers.map((observed) => observed()),
      ].join('|');
      stable = quiet && signature === last ? stable + 1 : 0;
      last = signature;
      if (stable >= 4) return;
    }
    throw new Error(`the fleet never settled at +${this.clock.nowMs() - START_MS} ms`);
  }

  /** Counts more consumers' events into the settle test (an observer's watches). */
  observe(eventsApplied: () => number): void {
    this.observers.push(eventsApplied);
  }

  /**
   * Runs virtual time until `done` holds (checked at every settled instant), at most `limitMs` of
   * it; `onInstant` runs at every settled instant (invariant checks, faults). A killed controller
   * is restarted at once, as its Deployment would.
   */
  async runUntil(
    done: () => boolean | Promise<boolean>,
    limitMs: number,
    onInstant: () => void | Promise<void> = () => undefined,
  ): Promise<void> {
    const endMs = this.clock.nowMs() + limitMs;
    for (let instant = 0; instant < 1_000_000; instant += 1) {
      await this.settle();
      if (this.controllerKilled) {
        await this.process?.done;
        await this.startController();
        continue;
      }
      await onInstant();
      if (await done()) return;
      if (this.clock.advance(endMs) === 0) throw new Error(`nothing left to happen before +${limitMs} ms`);
    }
  }

  /** Runs `stop` when the world closes (a watcher of its own, say). */
  onClose(stop: () => void): void {
    this.closers.push(stop);
  }

  async close(): Promise<void> {
    for (const stop of this.closers) stop();
    this.process?.crash.kill();
    await this.process?.done.catch(() => undefined);
    for (const stop of this.stops) stop.abort();
    this.admin.close();
    await this.fake.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
