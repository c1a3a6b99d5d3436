/**
 * The controller benchmark (bench/controller/run.mjs runs it): the real `agent-upgrade controller`
 * process against the fake API server on loopback, in real time, at each fleet size — a complete
 * successful rollout over every machine (memory, reconcile time, requests), then rounds of a
 * canary that fails once (the time from that failure's status write to `Halted`). Baselines from
 * the same run: the controller against an empty cluster, `agent-upgrade version`, a plain GET.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fleetOf, NEW_RELEASE, NEW_VERSION, OLD_RELEASE, OLD_VERSION } from '../../test/sim/fleet/fleet-scenarios.js';
import { completeRolloutSpec, HALT_RELEASE, HALT_VERSION } from './bench-specs.js';
import { BenchWorld, TOKENS, waitUntil } from './bench-world.js';
import { Behaviour, type HaltRound, runHaltRounds } from './halt-rounds.js';
import { CLI, ControllerProcess, REPO, type Memory } from './controller-process.js';
import {
  mib,
  median,
  parseHistogram,
  staleSources,
  since,
  summarize,
  tally,
  type HistogramSummary,
  type Tally,
} from './measures.js';

const RECONCILE_HISTOGRAM = 'agent_upgrade_reconcile_duration_seconds';
/** Real-time daemons: claim within 0.1 s, upgrade in 1 to 2.5 s, on a 250 ms grid (writes come in bursts). */
const TIMINGS = { claimMs: 100, upgradeMs: [1_000, 1_500, 2_000, 2_500], tickMs: 250 } as const;
const QUIET_MS = 3_000;
/** How long the controller is left alone after the rollout before its steady RSS is read (V8's memory reducer acts within it). */
const STEADY_MS = 10_000;

export interface BenchOptions {
  readonly sizes: readonly number[];
  readonly haltRounds: number;
  readonly getSamples: number;
  readonly seed: number;
  readonly log: (line: string) => void;
}

export interface Baseline {
  /** Peak RSS of `agent-upgrade version` (GNU time), KiB; null without /usr/bin/time. */
  readonly versionPeakKiB: number | null;
  /** The controller leading over an empty cluster, caches filled, a few seconds on. */
  readonly emptyCluster: Memory;
}

export type { HaltRound } from './halt-rounds.js';

export interface SizeResult {
  readonly machines: number;
  readonly readyMs: number;
  readonly memory: {
    readonly idle: Memory;
    /** When the rollout's status first showed no machine left to create an operation for. */
    readonly allCreated: Memory | null;
    /** At the end of a quiet STEADY_MS after the rollout; with the lowest and highest RSS read in it. */
    readonly steady: Memory;
    readonly steadyRangeKiB: { readonly min: number; readonly max: number };
    readonly maxSampledRssKiB: number;
  };
  readonly rolloutMs: number;
  readonly controllerCpuMs: number;
  /** Every reconcile of the controller's life up to the rollout's end. */
  readonly reconcile: HistogramSummary;
  /** The reconciles of the halt rounds: no more than three creates each, so mostly the planning itself. */
  readonly reconcileHaltRounds: HistogramSummary;
  readonly operations: number;
  /** The controller's requests from its start to the end of the rollout. */
  readonly controller: Tally;
  readonly daemons: Tally;
  readonly getRoundTripMs: { readonly median: number; readonly p95: number };
  readonly halts: readonly HaltRound[];
  readonly haltMedianMs: number;
  readonly stopped: { readonly code: number | null; readonly signal: string | null };
}

export interface BenchResult {
  readonly date: string;
  readonly node: string;
  readonly cores: number;
  readonly baseline: Baseline;
  readonly sizes: readonly SizeResult[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function runControllerBench(options: BenchOptions): Promise<BenchResult> {
  if (!existsSync(join(REPO, 'dist', 'app', 'main', 'main.js'))) throw new Error('no dist/: run `npm run build` first');
  const stale = staleSources(join(REPO, 'src'), join(REPO, 'dist'), REPO);
  // `npm run bench:controller` builds first; run by hand, the bench measures the dist/ there is.
  if (stale.length > 0)
    options.log(
      `warning: dist/ is older than ${stale.length} source files (${stale.slice(0, 3).join(', ')}): it measures dist/`,
    );
  const baseline = await measureBaseline(options);
  options.log(
    `baseline: controller on an empty cluster RSS ${mib(baseline.emptyCluster.rssKiB)} MiB, peak ${mib(baseline.emptyCluster.peakKiB)} MiB; ` +
      `agent-upgrade version peak ${baseline.versionPeakKiB === null ? 'n/a' : `${mib(baseline.versionPeakKiB)} MiB`}`,
  );
  const sizes: SizeResult[] = [];
  for (const size of options.sizes) sizes.push(await measureSize(size, options));
  return {
    date: new Date().toISOString().slice(0, 10),
    node: process.version,
    cores: (await import('node:os')).availableParallelism(),
    baseline,
    sizes,
  };
}

async function measureBaseline(options: BenchOptions): Promise<Baseline> {
  let versionPeakKiB: number | null = null;
  if (existsSync('/usr/bin/time')) {
    const run = spawnSync('/usr/bin/time', ['-f', '%M', CLI, 'version'], { encoding: 'utf8' });
    const last = run.stderr.trim().split('\n').at(-1) ?? '';
    if (run.status === 0 && /^\d+$/.test(last)) versionPeakKiB = Number(last);
  }
  const world = await BenchWorld.start({
    machines: [],
    seed: options.seed,
    timings: TIMINGS,
    behaviour: () => 'Succeeded',
    releases: [],
  });
  const controller = await ControllerProcess.start(world.controllerKubeconfig, 'bench-empty');
  try {
    await controller.ready(60_000);
    await sleep(QUIET_MS);
    return { versionPeakKiB, emptyCluster: controller.memory() };
  } finally {
    await controller.stop();
    await world.close();
  }
}

async function measureSize(size: number, options: BenchOptions): Promise<SizeResult> {
  const { log } = options;
  const behaviour = new Behaviour();
  const world = await startSizeWorld(size, options.seed, behaviour);
  let controller: ControllerProcess | null = null;
  try {
    const startedMs = performance.now();
    controller = await ControllerProcess.start(world.controllerKubeconfig, `bench-${size}`);
    const running = controller;
    await running.ready(120_000);
    const readyMs = performance.now() - startedMs;
    await sleep(QUIET_MS);
    const idle = running.memory();
    log(`${size} machines: ready in ${(readyMs / 1000).toFixed(1)} s, idle RSS ${mib(idle.rssKiB)} MiB`);

    const { rolloutMs, allCreated, maxSampledRssKiB } = await measureRollout(world, running, size, idle.rssKiB);
    const { steady, steadyRangeKiB } = await measureSteady(running);
    const controllerCpuMs = running.cpuMs();
    const reconcile = summarize(parseHistogram(await running.metrics(), RECONCILE_HISTOGRAM));
    const requests = requestsOf(world);
    log(
      `${size} machines: rollout Succeeded in ${(rolloutMs / 1000).toFixed(1)} s, ${requests.operations} operations, ` +
        `steady RSS ${mib(steady.rssKiB)} MiB, peak ${mib(steady.peakKiB)} MiB, ${reconcile.count} reconciles, mean ${reconcile.meanMs.toFixed(1)} ms`,
    );
    const getRoundTripMs = roundTripsOf(await world.getRoundTrips(options.getSamples));

    world.deleteRollout('fleet');
    await sleep(1_000);
    const { halts, reconcileHaltRounds } = await measureHalts(world, behaviour, running, options.haltRounds);
    log(
      `${size} machines: failure to Halted ${halts.map((halt) => halt.ms.toFixed(0)).join(', ')} ms; GET round trip median ${getRoundTripMs.median.toFixed(2)} ms`,
    );
    const stopped = await running.stop();
    controller = null;
    log(
      `${size} machines: the controller stopped on SIGTERM in ${stopped.afterMs.toFixed(0)} ms, exit ${stopped.code ?? stopped.signal}`,
    );
    return {
      machines: size,
      readyMs,
      memory: { idle, allCreated, steady, steadyRangeKiB, maxSampledRssKiB },
      rolloutMs,
      controllerCpuMs,
      reconcile,
      reconcileHaltRounds,
      ...requests,
      getRoundTripMs,
      halts,
      haltMedianMs: median(halts.map((halt) => halt.ms)),
      stopped: { code: stopped.code, signal: stopped.signal },
    };
  } catch (error) {
    if (controller !== null) log(`controller log tail:\n${controller.logTail}`);
    throw error;
  } finally {
    await controller?.stop();
    await world.close();
  }
}

/** The cluster of `size` machines, with the fleet's, the old and the halt rounds' releases. */
function startSizeWorld(size: number, seed: number, behaviour: Behaviour): Promise<BenchWorld> {
  return BenchWorld.start({
    machines: fleetOf(size, seed),
    seed,
    timings: TIMINGS,
    behaviour: behaviour.outcome,
    releases: [
      [NEW_RELEASE, NEW_VERSION],
      [OLD_RELEASE, OLD_VERSION],
      [HALT_RELEASE, HALT_VERSION],
    ],
  });
}

/**
 * A complete successful rollout over every machine: how long it took, and the controller's memory
 * sampled on the way (its highest RSS, and when no machine was left to create an operation for).
 */
async function measureRollout(
  world: BenchWorld,
  running: ControllerProcess,
  size: number,
  idleRssKiB: number,
): Promise<{ rolloutMs: number; allCreated: Memory | null; maxSampledRssKiB: number }> {
  let maxSampledRssKiB = idleRssKiB;
  let allCreated: Memory | null = null;
  const sampler = setInterval(() => {
    const memory = running.memory();
    maxSampledRssKiB = Math.max(maxSampledRssKiB, memory.rssKiB);
    const counts = world.rollouts.get('fleet')?.status?.['counts'] as { pending?: unknown } | undefined;
    if (allCreated === null && counts?.pending === 0) allCreated = memory;
  }, 100);
  const rolloutStartMs = performance.now();
  await world.createRollout('fleet', completeRolloutSpec());
  try {
    await waitUntil(
      () =>
        world.phaseOf('fleet') === 'Succeeded' &&
        [...world.machines.values()].every((machine) => machine.version === NEW_VERSION) &&
        world.daemons.writesInFlight === 0,
      60_000 + size * 40,
      `the rollout over ${size} machines to succeed (phase ${world.phaseOf('fleet')})`,
      100,
    );
  } finally {
    clearInterval(sampler);
  }
  const rolloutMs = (world.rollouts.get('fleet')?.phases.get('Succeeded') ?? performance.now()) - rolloutStartMs;
  return { rolloutMs, allCreated, maxSampledRssKiB };
}

/** The controller's memory after STEADY_MS left alone, with the lowest and highest RSS read in it. */
async function measureSteady(
  running: ControllerProcess,
): Promise<{ steady: Memory; steadyRangeKiB: { min: number; max: number } }> {
  const steadyRangeKiB = { min: Number.POSITIVE_INFINITY, max: 0 };
  for (let waited = 0; waited < STEADY_MS; waited += 500) {
    await sleep(500);
    const { rssKiB } = running.memory();
    steadyRangeKiB.min = Math.min(steadyRangeKiB.min, rssKiB);
    steadyRangeKiB.max = Math.max(steadyRangeKiB.max, rssKiB);
  }
  return { steady: running.memory(), steadyRangeKiB };
}

/** The requests of the controller and of the daemons so far, and the operations created. */
function requestsOf(world: BenchWorld): Pick<SizeResult, 'controller' | 'daemons' | 'operations'> {
  return {
    controller: tally(world.fake.requests, TOKENS.controller),
    daemons: tally(world.fake.requests, TOKENS.daemons),
    operations: world.fake.operations.list().length,
  };
}

function roundTripsOf(trips: readonly number[]): SizeResult['getRoundTripMs'] {
  return {
    median: median(trips),
    p95: [...trips].sort((a, b) => a - b)[Math.floor(trips.length * 0.95)] ?? 0,
  };
}

/** The halt rounds, and the controller's reconciles during them. */
async function measureHalts(
  world: BenchWorld,
  behaviour: Behaviour,
  running: ControllerProcess,
  rounds: number,
): Promise<Pick<SizeResult, 'halts' | 'reconcileHaltRounds'>> {
  const beforeHalts = parseHistogram(await running.metrics(), RECONCILE_HISTOGRAM);
  const halts = await runHaltRounds(world, behaviour, rounds);
  const reconcileHaltRounds = summarize(
    since(parseHistogram(await running.metrics(), RECONCILE_HISTOGRAM), beforeHalts),
  );
  return { halts, reconcileHaltRounds };
}
