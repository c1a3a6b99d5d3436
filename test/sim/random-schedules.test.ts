/**
 * Seeded random schedules over the managed (self-hosted) path: each seed runs 1–3 sequential
 * upgrades of the same host (v2, then v3, …; sometimes a version again), so later upgrades start
 * from whatever earlier ones left. Each seed first draws its fault mix (the harness's
 * `swarmOptions`: how often crashes, crashes during recovery, port faults and power losses strike,
 * each sometimes never) and which candidate behaviours it draws from; then the PRNG chooses each
 * candidate's behaviour, arms crashes at random FS ops (power loss in `synced` durability or a
 * kill in `prefix`), and fails random port calls. SimHost runs the checkers after every step and
 * at every quiescence, and keeps a one-line-per-step trace (symbols: managed-sim-host.ts).
 *
 * Replay one seed, with its trace printed (a failure prints this line with its seed):
 *   SIM_SEED=<seed> npx vitest run test/sim/random-schedules.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimFailure } from './harness/failure.js';
import { Prng } from './harness/prng.js';
import { replayCommand } from './harness/replay.js';
import { formatSeed, seedOverride } from './harness/seed.js';
import { describeSwarm, swarmOptions, swarmProbability, type SwarmOptions } from './harness/swarm.js';
import { FAULT_OPTIONS, type FaultChooser, type PortFault } from './managed-faults.js';
import { SimHost, type Behaviour } from './managed-sim-host.js';

const SEEDS_COUNT = 300;
const SEED_BASE = 0x5eed_0000;
const SEEDS_PER_TEST = 50;
const PORT_FAULTS_MAX_PER_UPGRADE = 3;
/** Ops an upgrade with its recovery takes, roughly: a crash is armed somewhere in this window. */
const CRASH_WINDOW_OPS = 110;
const SECOND_CRASH_WINDOW_OPS = 60;
const CRASHES_MAX_PER_SEED = 4;
const FAILING_BEHAVIOURS: readonly Behaviour[] = ['crash-on-start', 'crash-after-start', 'version-fails'];
/** Chance that a seed never draws a given failing behaviour (swarm: some seeds see only a few kinds). */
const BEHAVIOUR_OFF_CHANCE = 0.2;
const BEHAVIOUR_WEIGHT_MAX = 10;
/** Healthy candidates are about half of all, as before the swarm (Complete paths are checked most). */
const HEALTHY_WEIGHT_MIN = 10;
const HEALTHY_WEIGHT_MAX = 20;
const DESCRIBE = 'random schedules of crashes, port faults and candidate behaviours over sequential managed upgrades';

const replaySeed = seedOverride();
const seeds = replaySeed !== null ? [replaySeed] : Array.from({ length: SEEDS_COUNT }, (_, index) => SEED_BASE + index);

/** One seed's options: the harness's fault mix and what this simulation adds to it. */
interface ScheduleOptions {
  readonly swarm: SwarmOptions;
  readonly behaviours: readonly (readonly [Behaviour, number])[];
  readonly wrongDigestProbability: number;
  /** Chance that an upgrade after the first asks for the same version again (quarantine, identical candidate). */
  readonly sameVersionProbability: number;
}

function scheduleOptions(prng: Prng): ScheduleOptions {
  const swarm = swarmOptions(prng);
  // A healthy candidate is always possible (Complete is where I7 and I12's success half are checked).
  const healthy = [['healthy', prng.between(HEALTHY_WEIGHT_MIN, HEALTHY_WEIGHT_MAX)] as const];
  const failing = FAILING_BEHAVIOURS.map(
    (behaviour) => [behaviour, prng.chance(BEHAVIOUR_OFF_CHANCE) ? 0 : prng.between(1, BEHAVIOUR_WEIGHT_MAX)] as const,
  ).filter(([, weight]) => weight > 0);
  return {
    swarm,
    behaviours: [...healthy, ...failing],
    wrongDigestProbability: swarmProbability(prng, 0.02, 0.12),
    sameVersionProbability: swarmProbability(prng, 0.05, 0.35),
  };
}

interface SeedRun {
  readonly upgrades: number;
  readonly crashes: number;
  readonly faults: number;
  readonly phases: readonly string[];
}

/** Port faults: each faultable call fails with the seed's probability, a few per upgrade at most. */
function randomFaults(prng: Prng, probability: number, spent: { count: number }): FaultChooser {
  return (call) => {
    if (spent.count >= PORT_FAULTS_MAX_PER_UPGRADE || !prng.chance(probability)) return null;
    spent.count += 1;
    return prng.pick<PortFault>(FAULT_OPTIONS[call.method]);
  };
}

/** A host whose reboots sometimes arm a second crash during the recovery. */
function hostFor(prng: Prng, swarm: SwarmOptions, spent: { count: number }, crashes: { count: number }): SimHost {
  return new SimHost({
    faults: randomFaults(prng, swarm.callFaultProbability, spent),
    rebootMode: () => (prng.chance(swarm.powerLossProbability) ? 'synced' : 'prefix'),
    afterReboot: (rebooted) => {
      crashes.count += 1;
      if (crashes.count < CRASHES_MAX_PER_SEED && prng.chance(swarm.recrashProbability)) {
        const at = rebooted.world.fs.opCount + prng.int(SECOND_CRASH_WINDOW_OPS);
        rebooted.world.fs.crashAt(at);
        rebooted.note(`crash armed during recovery at op ${at}`);
      }
    },
  });
}

async function runSeed(seed: number): Promise<{ run: SeedRun; host: SimHost }> {
  const prng = new Prng(seed);
  const options = scheduleOptions(prng);
  const spent = { count: 0 };
  const crashes = { count: 0 };
  const sim = hostFor(prng, options.swarm, spent, crashes);
  await sim.boot();
  const upgrades = prng.between(1, 3);
  sim.note(`seed ${formatSeed(seed)}: ${upgrades} upgrade(s); ${describeSwarm(options.swarm)}`);
  const behaviourOf = new Map<string, Behaviour>();
  const phases: string[] = [];
  let faults = 0;
  let version = 1;
  for (let index = 0; index < upgrades; index += 1) {
    if (index === 0 || !prng.chance(options.sameVersionProbability)) version += 1;
    const text = `${version}.0.0`;
    const behaviour = behaviourOf.get(text) ?? prng.weighted(options.behaviours);
    behaviourOf.set(text, behaviour);
    const wrongDigest = prng.chance(options.wrongDigestProbability);
    if (crashes.count < CRASHES_MAX_PER_SEED && prng.chance(options.swarm.crashProbability)) {
      const at = sim.world.fs.opCount + prng.int(CRASH_WINDOW_OPS);
      sim.world.fs.crashAt(at);
      sim.note(`crash armed at op ${at}`);
    }
    faults += spent.count;
    spent.count = 0;
    const result = await sim.upgrade({ name: `up${index + 1}`, version: text, behaviour, wrongDigest });
    phases.push(result.phase ?? 'none');
  }
  return { run: { upgrades, crashes: crashes.count, faults: faults + spent.count, phases }, host: sim };
}

const totals = { seeds: 0, upgrades: 0, crashes: 0, faults: 0, complete: 0, failed: 0 };
let stackTraceLimit = Error.stackTraceLimit;
beforeAll(() => {
  stackTraceLimit = Error.stackTraceLimit;
  // memfs builds an Error per failed lookup; their stacks cost a third of the run time. Kept on replay.
  if (replaySeed === null) Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackTraceLimit;
  console.info(
    `random schedules: ${totals.seeds} seeds, ${totals.upgrades} upgrades (${totals.complete} Complete, ${totals.failed} Failed), ${totals.crashes} crashes, ${totals.faults} port faults`,
  );
});

function count(run: SeedRun): void {
  totals.seeds += 1;
  totals.upgrades += run.upgrades;
  totals.crashes += run.crashes;
  totals.faults += run.faults;
  totals.complete += run.phases.filter((phase) => phase === 'Complete').length;
  totals.failed += run.phases.filter((phase) => phase === 'Failed').length;
}

const chunks: number[][] = [];
for (let start = 0; start < seeds.length; start += SEEDS_PER_TEST)
  chunks.push(seeds.slice(start, start + SEEDS_PER_TEST));

describe(DESCRIBE, () => {
  it.each(chunks.map((chunk) => [chunk[0] ?? 0, chunk[chunk.length - 1] ?? 0, chunk] as const))(
    'seeds %i … %i keep every invariant',
    async (_first, _last, chunk) => {
      const failures: string[] = [];
      for (const seed of chunk) {
        try {
          const { run, host } = await runSeed(seed);
          count(run);
          if (replaySeed !== null) console.info(host.formatTrace());
        } catch (error) {
          if (!(error instanceof SimFailure)) throw error;
          const replay = replayCommand(expect.getState().testPath ?? '', DESCRIBE, seed);
          failures.push(`seed ${formatSeed(seed)} (replay: ${replay})\n${error.message}`);
        }
      }
      const headlines = failures.map((failure) => failure.split('\n').slice(0, 2).join(' — ')).join('\n');
      expect(
        failures.length,
        `${failures.length} of ${chunk.length} seeds broke an invariant:\n${headlines}\n\nFirst failing seed:\n${failures[0] ?? ''}`,
      ).toBe(0);
    },
  );
});
