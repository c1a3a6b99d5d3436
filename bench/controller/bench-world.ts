/**
 * The cluster the controller benchmark runs the real controller process against, in real time:
 * the fake API server of test/support/kube on 127.0.0.1 with N Nodes, two releases, the simulated
 * node daemons of the fleet simulation (test/sim/fleet/fleet-daemons.ts) on the system clock, and
 * an observer that watches every AgentRollout and notes when each phase was first seen. Controller,
 * daemons and observer (the admin) each have their own bearer token, so the fake's request log
 * tells their requests apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInformer } from '../../src/adapters/fleet/kubernetes/informer.js';
import { readRollout } from '../../src/adapters/fleet/kubernetes/read-objects.js';
import { RELEASES_PATH, ROLLOUTS_PATH, objectPath } from '../../src/adapters/fleet/kubernetes/resource-paths.js';
import { connectKubeHttp } from '../../src/adapters/common/kubernetes/kube-connection.js';
import { KubeHttp } from '../../src/adapters/common/kubernetes/kube-http.js';
import { loadWatchClient } from '../../src/adapters/common/kubernetes/kube-watch.js';
import { UnauthorizedStreak } from '../../src/adapters/common/kubernetes/unauthorized-streak.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import {
  FleetDaemons,
  type DaemonOutcome,
  type DaemonTimings,
  type FleetMachine,
} from '../../test/sim/fleet/fleet-daemons.js';
import { informerSettings, WarningLog } from '../../test/sim/fleet/fleet-parts.js';
import { releaseManifest, rolloutManifest, versionOfUrl } from '../../test/sim/fleet/fleet-scenarios.js';
import { Prng } from '../../test/sim/harness/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../test/support/kube/fake-apiserver.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../test/support/kube/kubeconfig-builder.js';

export const TOKENS = {
  controller: 'bench-controller-token',
  daemons: 'bench-daemons-token',
  admin: 'bench-admin-token',
} as const;
export const LEASE_NAMESPACE = 'agent-upgrade-system';

type Call = KubeHttp['call'];

/**
 * The daemons' client, noting when each answer to a status patch that wrote `Failed` arrived
 * (performance.now()): the deciding event of a halt is the moment its writer was told it landed.
 */
class TimedDaemonHttp extends KubeHttp {
  readonly failedAnswers: { readonly operation: string; readonly atMs: number }[] = [];

  override async call(...args: Parameters<Call>): ReturnType<Call> {
    const [method, path, options] = args;
    const answer = await super.call(method, path, options);
    const phase = (options?.body as { status?: { phase?: unknown } } | undefined)?.status?.phase;
    if (method === 'PATCH' && path.endsWith('/status') && phase === 'Failed')
      this.failedAnswers.push({ operation: path.split('/').at(-2) ?? '', atMs: performance.now() });
    return answer;
  }
}

export interface RolloutSeen {
  readonly status: Record<string, unknown> | null;
  /** performance.now() when each phase was first seen on the watch. */
  readonly phases: Map<string, number>;
  /** performance.now() of every event for it, in order. */
  readonly eventsMs: number[];
}

export interface BenchWorldOptions {
  readonly machines: readonly FleetMachine[];
  readonly seed: number;
  readonly timings: DaemonTimings;
  readonly behaviour: (machine: FleetMachine, targetVersion: string) => DaemonOutcome;
  readonly releases: readonly (readonly [name: string, version: string])[];
}

/** The fake API server for `size` machines, its tokens and the controller's Lease namespace. */
function startBenchFake(size: number): Promise<FakeApiServer> {
  return startFakeApiServer({
    tokens: Object.values(TOKENS),
    recordRequestBodies: false,
    // Enough for every write of a run; a watch that resumes never finds its resourceVersion compacted.
    historyLimit: Math.max(20_000, size * 8),
    namespaces: [LEASE_NAMESPACE],
    // About what a real server sends on a quiet watch.
    bookmarkIntervalMs: 60_000,
  });
}

/** What an informer (the daemons' or the observer's) needs besides its client, seeded for its jitter. */
function informerDeps(WatchClient: Awaited<ReturnType<typeof loadWatchClient>>, clock: SystemClock, seed: number) {
  return {
    WatchClient,
    clock,
    logger: new WarningLog(),
    streak: new UnauthorizedStreak({ attempts: 5, windowMs: 180_000 }, clock),
    settings: informerSettings(new Prng(seed)),
  };
}

type InformerDeps = ReturnType<typeof informerDeps>;

export class BenchWorld {
  readonly rollouts = new Map<string, RolloutSeen>();
  private readonly stop = new AbortController();

  private constructor(
    readonly fake: FakeApiServer,
    readonly admin: KubeHttp,
    readonly daemonHttp: TimedDaemonHttp,
    private readonly daemonWatchHttp: KubeHttp,
    readonly daemons: FleetDaemons,
    readonly machines: ReadonlyMap<string, FleetMachine>,
    readonly controllerKubeconfig: string,
    private readonly dir: string,
    private readonly releaseName: string,
  ) {}

  static async start(options: BenchWorldOptions): Promise<BenchWorld> {
    const fake = await startBenchFake(options.machines.length);
    const dir = mkdtempSync(join(tmpdir(), 'bench-controller-'));
    let world: BenchWorld | null = null;
    try {
      const kubeconfig = (who: keyof typeof TOKENS): string =>
        writeKubeconfigFile(
          join(dir, `${who}.yaml`),
          kubeconfigDocument({ server: fake.origin }, { token: TOKENS[who] }),
        );
      for (const machine of options.machines)
        fake.setNode(machine.name, { ...machine.labels }, { 'agent-upgrade.dev/agent-version': machine.version });
      const admin = await connectKubeHttp(kubeconfig('admin'));
      const plain = await connectKubeHttp(kubeconfig('daemons'));
      const daemonHttp = new TimedDaemonHttp(plain.config, plain.credentials, null);
      const clock = new SystemClock();
      const machines = new Map(options.machines.map((machine) => [machine.name, machine]));
      const WatchClient = await loadWatchClient();
      const informer = (seed: number): InformerDeps => informerDeps(WatchClient, clock, seed);
      const daemons = new FleetDaemons({
        http: daemonHttp,
        informer: { http: plain, ...informer(options.seed + 1) },
        // The system clock makes the simulation's daemons run in real time.
        clock,
        machines,
        versionOf: versionOfUrl,
        behaviour: options.behaviour,
        timings: options.timings,
      });
      const built = new BenchWorld(
        fake,
        admin,
        daemonHttp,
        plain,
        daemons,
        machines,
        kubeconfig('controller'),
        dir,
        options.releases[0]?.[0] ?? '',
      );
      world = built;
      void daemons.run(built.stop.signal).catch(() => undefined);
      built.observeRollouts(informer(options.seed + 2));
      for (const [name, version] of options.releases) await built.create(RELEASES_PATH, releaseManifest(name, version));
      return built;
    } catch (error) {
      if (world !== null) await world.close();
      else {
        await fake.close();
        rmSync(dir, { recursive: true, force: true });
      }
      throw error;
    }
  }

  /** Watches every AgentRollout as the admin, noting what it sees (seen) until close. */
  private observeRollouts(informer: InformerDeps): void {
    void runInformer(
      { http: this.admin, ...informer, count: () => undefined },
      { resource: 'agentrollouts', path: ROLLOUTS_PATH, read: readRollout },
      (event) => {
        const now = performance.now();
        if (event.type === 'replace') for (const rollout of event.objects) this.seen(rollout.name, rollout.status, now);
        else if (event.type === 'upsert') this.seen(event.object.name, event.object.status, now);
        else this.rollouts.delete(event.name);
      },
      this.stop.signal,
    ).catch(() => undefined);
  }

  private seen(name: string, status: unknown, now: number): void {
    const record = status !== null && typeof status === 'object' ? (status as Record<string, unknown>) : null;
    const known = this.rollouts.get(name) ?? { status: null, phases: new Map<string, number>(), eventsMs: [] };
    const phase = record?.['phase'];
    if (typeof phase === 'string' && !known.phases.has(phase)) known.phases.set(phase, now);
    known.eventsMs.push(now);
    this.rollouts.set(name, { ...known, status: record });
  }

  phaseOf(name: string): string | null {
    const phase = this.rollouts.get(name)?.status?.['phase'];
    return typeof phase === 'string' ? phase : null;
  }

  async create(path: string, body: object): Promise<unknown> {
    return this.admin.call('POST', path, { body });
  }

  async createRollout(name: string, spec: Record<string, unknown>): Promise<void> {
    await this.create(ROLLOUTS_PATH, rolloutManifest(name, spec));
  }

  /** Deletes a rollout as `kubectl delete` would (the fake has no garbage collector: its operations stay). */
  deleteRollout(name: string): void {
    this.fake.rollouts.delete(name);
  }

  /** Round trips of a plain GET of one object (a release), ms, one after another. */
  async getRoundTrips(samples: number): Promise<number[]> {
    const path = objectPath(RELEASES_PATH, this.releaseName);
    const times: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      const startedMs = performance.now();
      await this.admin.call('GET', path);
      times.push(performance.now() - startedMs);
    }
    return times;
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.admin.close();
    this.daemonHttp.close();
    this.daemonWatchHttp.close();
    await this.fake.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `condition` every `everyMs` until it holds; throws after `timeoutMs` with `what`. */
export async function waitUntil(
  condition: () => boolean,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
