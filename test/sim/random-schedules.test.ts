/**
 * Seeded random schedules over the managed (self-hosted) path: each seed runs 1–3 sequential
 * upgrades of the same host (v2, then v3, …; sometimes a version again), so later upgrades start
 * from whatever earlier ones left. The PRNG chooses each candidate's behaviour, arms crashes at
 * random FS ops (power loss in `prefix` or `synced` durability, sometimes again during the
 * recovery), and fails random port calls. SimHost checks the invariants after every step and at
 * every quiescence, and keeps a one-line-per-step trace.
 *
 * Trace legend: U upgrade, N new daemon process, G a start (gate, then migrate), M a sweep by the
 * next start, H handle, P publish
 * call, ! port fault, S scheduled restart, R recovery script, x the candidate died, $ crash,
 * ^ reboot, # a decision of the schedule, = quiescent.
 *
 * Replay one seed, with its trace printed:  SIM_SEED=<seed> npx vitest run test/sim/random-schedules.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from './prng.js';
import {
  FAULT_OPTIONS,
  SimFailure,
  SimHost,
  type Behaviour,
  type FaultChooser,
  type PortFault,
} from './managed-sim-host.js';

const SEEDS_COUNT = 300;
const SEED_BASE = 0x5eed_0000;
const SEEDS_PER_TEST = 50;
const PORT_FAULT_PROBABILITY = 0.05;
const PORT_FAULTS_MAX_PER_UPGRADE = 3;
const CRASH_PROBABILITY = 0.6;
/** Ops an upgrade with its recovery takes, roughly: a crash is armed somewhere in this window. */
const CRASH_WINDOW_OPS = 110;
const SECOND_CRASH_PROBABILITY = 0.3;
const SECOND_CRASH_WINDOW_OPS = 60;
const CRASHES_MAX_PER_SEED = 4;

const BEHAVIOURS: readonly (readonly [Behaviour, number])[] = [
  ['healthy', 55],
  ['crash-on-start', 15],
  ['crash-after-start', 20],
  ['version-fails', 10],
];

const replaySeed = process.env.SIM_SEED === undefined ? null : Number(process.env.SIM_SEED);
const seeds = replaySeed !== null ? [replaySeed] : Array.from({ length: SEEDS_COUNT }, (_, index) => SEED_BASE + index);

interface SeedRun {
  readonly seed: number;
  readonly upgrades: number;
  readonly crashes: number;
  readonly faults: number;
  readonly phases: readonly string[];
}

/** Port faults: each faultable call fails with a small probability, a few per upgrade at most. */
function randomFaults(prng: Prng, spent: { count: number }): FaultChooser {
  return (call) => {
    if (spent.count >= PORT_FAULTS_MAX_PER_UPGRADE || !prng.chance(PORT_FAULT_PROBABILITY)) return null;
    spent.count += 1;
    return prng.pick<PortFault>(FAULT_OPTIONS[call.method]);
  };
}

async function runSeed(seed: number): Promise<{ run: SeedRun; host: SimHost }> {
  const prng = new Prng(seed);
  const spent = { count: 0 };
  let crashes = 0;
  let faults = 0;
  const host: SimHost = new SimHost({
    faults: randomFaults(prng, spent),
    rebootMode: () => prng.pick(['prefix', 'synced'] as const),
    afterReboot: (rebooted) => {
      crashes += 1;
      if (crashes < CRASHES_MAX_PER_SEED && prng.chance(SECOND_CRASH_PROBABILITY)) {
        const at = rebooted.world.fs.opCount + prng.int(SECOND_CRASH_WINDOW_OPS);
        rebooted.world.fs.crashAt(at);
        rebooted.note(`crash armed during recovery at op ${at}`);
      }
    },
  });
  await host.boot();
  const upgrades = prng.between(1, 3);
  host.note(`seed ${seed}: ${upgrades} upgrade(s)`);
  const behaviourOf = new Map<string, Behaviour>();
  const phases: string[] = [];
  let version = 1;
  for (let index = 0; index < upgrades; index += 1) {
    // Mostly a newer version; sometimes the same one again (quarantine, identical candidate).
    if (index === 0 || !prng.chance(0.15)) version += 1;
    const text = `${version}.0.0`;
    const behaviour = behaviourOf.get(text) ?? prng.weighted(BEHAVIOURS);
    behaviourOf.set(text, behaviour);
    const wrongDigest = prng.chance(0.05);
    if (crashes < CRASHES_MAX_PER_SEED && prng.chance(CRASH_PROBABILITY)) {
      const at = host.world.fs.opCount + prng.int(CRASH_WINDOW_OPS);
      host.world.fs.crashAt(at);
      host.note(`crash armed at op ${at}`);
    }
    faults += spent.count;
    spent.count = 0;
    const result = await host.upgrade({ name: `up${index + 1}`, version: text, behaviour, wrongDigest });
    phases.push(result.phase ?? 'none');
  }
  faults += spent.count;
  return { run: { seed, upgrades, crashes, faults, phases }, host };
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

const chunks: number[][] = [];
for (let start = 0; start < seeds.length; start += SEEDS_PER_TEST)
  chunks.push(seeds.slice(start, start + SEEDS_PER_TEST));

describe('random schedules of crashes, port faults and candidate behaviours over sequential managed upgrades', () => {
  it.each(chunks.map((chunk) => [chunk[0] ?? 0, chunk[chunk.length - 1] ?? 0, chunk] as const))(
    'seeds %i … %i keep every invariant',
    async (_first, _last, chunk) => {
      const failures: string[] = [];
      for (const seed of chunk) {
        try {
          const { run, host } = await runSeed(seed);
          totals.seeds += 1;
          totals.upgrades += run.upgrades;
          totals.crashes += run.crashes;
          totals.faults += run.faults;
          totals.complete += run.phases.filter((phase) => phase === 'Complete').length;
          totals.failed += run.phases.filter((phase) => phase === 'Failed').length;
          if (replaySeed !== null) console.info(host.formatTrace());
        } catch (error) {
          if (!(error instanceof SimFailure)) throw error;
          failures.push(
            `seed ${seed} (replay: SIM_SEED=${seed} npx vitest run test/sim/random-schedules.test.ts)\n${error.message}`,
          );
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
