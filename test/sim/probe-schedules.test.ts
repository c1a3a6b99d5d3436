/**
 * Health probes in the managed simulation. Each seed configures `health.probe` and draws, from
 * its PRNG, how often the agent's health endpoint flakes (an attempt that times out), each
 * candidate's behaviour — healthy, a stable process whose probe answers 503 (`probe-fails`), or a
 * crashing one — and, self-hosted, crashes at random FS ops. Self-hosted runs go through SimHost,
 * which checks every invariant after every step; sidecar runs through the production daemon
 * session on the same memory world. A candidate whose probe fails must end Failed, back on the
 * previous binary; flakes below `failureThreshold` must not cost a healthy candidate its upgrade.
 *
 * Replay one seed (a failure prints this line with its seed):
 *   SIM_SEED=<seed> npx vitest run test/sim/probe-schedules.test.ts
 */
import { afterAll, describe, expect, it } from 'vitest';
import { probeFailed, type ProbeOutcome } from '../../src/domain/node/health/probe-target.js';
import type { OperationPhase } from '../../src/ports/node/operation-store.js';
import { SimFailure } from './harness/failure.js';
import { Prng } from './harness/prng.js';
import { replayCommand } from './harness/replay.js';
import { formatSeed, seedOverride } from './harness/seed.js';
import { Trace } from './harness/trace.js';
import { checkHostInvariants, resolveInSnapshot } from './host-invariants.js';
import { SimHost, type Behaviour } from './managed-sim-host.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld, SIM_PROBE } from './managed-world.js';

const PROBE_CONFIG = { ...CONFIG, health: { ...CONFIG.health, probe: SIM_PROBE } };
const SIDECAR_PROBE_CONFIG = { ...PROBE_CONFIG, agent: { ...CONFIG.agent, mode: 'sidecar' as const } };
const FLAKE = probeFailed('timed-out', 'timed out after 1000 ms');
const BEHAVIOURS: readonly (readonly [Behaviour, number])[] = [
  ['healthy', 4],
  ['probe-fails', 4],
  ['crash-after-start', 1],
  ['crash-on-start', 1],
];
const SELF_HOSTED_SEEDS = 40;
const SIDECAR_SEEDS = 40;
const SEED_BASE = 0x9b0b_0000;
/** Ops an upgrade with its recovery takes, roughly: a crash is armed somewhere in this window. */
const CRASH_WINDOW_OPS = 110;
const SIDECAR_ROUNDS_MAX = 12;

const replaySeed = seedOverride();
const seedsOf = (count: number, offset: number): number[] =>
  replaySeed !== null ? [replaySeed] : Array.from({ length: count }, (_, index) => SEED_BASE + offset + index);

/** What one upgrade of a seed ended in, with what the seed did to it. */
interface UpgradeOutcome {
  readonly behaviour: Behaviour;
  readonly phase: OperationPhase | null;
  /** Probe attempts that flaked during this upgrade. */
  readonly flaked: number;
  /** No crash and no flake could have struck: the behaviour alone decides. */
  readonly clean: boolean;
}

const totals = { upgrades: 0, probeFailed: 0, absorbed: 0, complete: 0 };
afterAll(() => {
  console.info(
    `probe schedules: ${totals.upgrades} upgrades, ${totals.complete} Complete (${totals.absorbed} despite flaky probes), ${totals.probeFailed} probe-failing candidates Failed`,
  );
});

/** The rules every upgrade's outcome must follow, beyond the simulation's invariants. */
function problemsOf(outcome: UpgradeOutcome): string[] {
  const problems: string[] = [];
  if (outcome.behaviour === 'probe-fails' && outcome.phase !== 'Failed')
    problems.push(`a candidate whose probe fails ended ${outcome.phase ?? 'without a status'}`);
  if (outcome.behaviour !== 'healthy' && outcome.phase === 'Complete')
    problems.push(`a ${outcome.behaviour} candidate ended Complete`);
  if (outcome.clean && outcome.behaviour === 'healthy' && outcome.phase !== 'Complete')
    problems.push(`a healthy candidate with nothing injected ended ${outcome.phase ?? 'without a status'}`);
  return problems;
}

function count(outcomes: readonly UpgradeOutcome[]): void {
  for (const outcome of outcomes) {
    totals.upgrades += 1;
    if (outcome.phase === 'Complete') totals.complete += 1;
    if (outcome.phase === 'Complete' && outcome.flaked > 0) totals.absorbed += 1;
    if (outcome.behaviour === 'probe-fails' && outcome.phase === 'Failed') totals.probeFailed += 1;
  }
}

/** A seed's flake rate: often none, else up to 40 % of the attempts. */
function flakeFault(prng: Prng): { probability: number; fault: () => ProbeOutcome | null } {
  const probability = prng.chance(0.3) ? 0 : prng.pick([0.1, 0.25, 0.4]);
  return { probability, fault: () => (prng.chance(probability) ? FLAKE : null) };
}

const flakesIn = (attempts: readonly ProbeOutcome[]): number =>
  attempts.filter((attempt) => attempt.kind === 'failed' && attempt.cause === 'timed-out').length;

/** 1–2 self-hosted upgrades through SimHost, which checks the invariants at every step. */
async function selfHostedSeed(seed: number): Promise<UpgradeOutcome[]> {
  const prng = new Prng(seed);
  const flakes = flakeFault(prng);
  const crashProbability = prng.pick([0, 0.25]);
  const sim = new SimHost({ config: PROBE_CONFIG });
  sim.world.probeFault = flakes.fault;
  await sim.boot();
  const upgrades = prng.between(1, 2);
  sim.note(
    `seed ${formatSeed(seed)}: ${upgrades} upgrade(s), flakes ${flakes.probability}, crashes ${crashProbability}`,
  );
  const outcomes: UpgradeOutcome[] = [];
  for (let index = 0; index < upgrades; index += 1) {
    const behaviour = prng.weighted(BEHAVIOURS);
    const crashed = prng.chance(crashProbability);
    if (crashed) {
      const at = sim.world.fs.opCount + prng.int(CRASH_WINDOW_OPS);
      sim.world.fs.crashAt(at);
      sim.note(`crash armed at op ${at}`);
    }
    const before = sim.world.probe.attempts.length;
    const result = await sim.upgrade({ name: `up${index + 1}`, version: `${index + 2}.0.0`, behaviour });
    const flaked = flakesIn(sim.world.probe.attempts.slice(before));
    const outcome = {
      behaviour,
      phase: result.phase as OperationPhase | null,
      flaked,
      clean: !crashed && flakes.probability === 0,
    };
    const problems = problemsOf(outcome);
    if (problems.length > 0) throw new SimFailure(problems, sim.trace);
    outcomes.push(outcome);
  }
  return outcomes;
}

/** One sidecar upgrade: the daemon switches, restarts the agent and runs its gate, probe included. */
async function sidecarSeed(seed: number): Promise<UpgradeOutcome[]> {
  const prng = new Prng(seed);
  const world = new ManagedWorld();
  world.config = SIDECAR_PROBE_CONFIG;
  const flakes = flakeFault(prng);
  world.probeFault = flakes.fault;
  const behaviour = prng.weighted(BEHAVIOURS);
  const candidate = agentScript('2.0.0');
  const release = world.publishRelease('2.0.0');
  if (behaviour !== 'version-fails') world.behaviours.set(digestOf(candidate), behaviour);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  await world.services.restart();
  let phase: OperationPhase | null = null;
  for (let round = 0; round < SIDECAR_ROUNDS_MAX && (phase === null || phase === 'Pending'); round += 1) {
    const daemon = world.daemon(null);
    if ((await daemon.start()).kind !== 'open') continue;
    phase = world.store.get('upgrade')?.phase ?? null;
    if (phase !== null && phase !== 'Pending') break;
    await daemon.handler.handle({ operation, phase, parameters });
    await daemon.start();
    phase = world.store.get('upgrade')?.phase ?? null;
  }
  const outcome = { behaviour, phase, flaked: flakesIn(world.probe.attempts), clean: flakes.probability === 0 };
  const problems = [
    ...problemsOf(outcome),
    ...(await sidecarHostProblems(world, phase === 'Complete' ? candidate : agentScript('1.0.0'))),
  ];
  if (problems.length > 0) {
    const trace = new Trace();
    trace.note(
      `seed ${formatSeed(seed)}: sidecar, ${behaviour}, flakes ${flakes.probability}, ended ${phase ?? 'none'}`,
    );
    throw new SimFailure(problems, trace);
  }
  return [outcome];
}

/** The host at rest: one terminal status, no record, current and the agent on `expected`. */
async function sidecarHostProblems(world: ManagedWorld, expected: string): Promise<string[]> {
  const snapshot = world.fs.snapshot();
  const problems = checkHostInvariants(
    snapshot,
    new Set([digestOf(agentScript('1.0.0')), digestOf(agentScript('2.0.0'))]),
  );
  if (world.store.terminalWrites('upgrade') !== 1)
    problems.push(`I5: ${world.store.terminalWrites('upgrade')} terminal writes`);
  if ((await world.fs.lstat(LAYOUT.record)) !== null) problems.push('I6: the record is still there');
  const current = resolveInSnapshot(snapshot, LAYOUT.current);
  const entry = current === null ? undefined : snapshot[current];
  if (entry?.kind !== 'file' || entry.sha256 !== digestOf(expected))
    problems.push('I12: current is not the expected binary');
  const running = await world.services.mainExecutable();
  const runningDigest = running === null ? null : (await world.fs.hashFile(running, 1 << 20)).sha256;
  if (runningDigest !== digestOf(expected)) problems.push('I12: the agent does not run the expected binary');
  return problems;
}

function runSeeds(name: string, seeds: readonly number[], body: (seed: number) => Promise<UpgradeOutcome[]>): void {
  it(name, async () => {
    const failures: string[] = [];
    for (const seed of seeds) {
      try {
        count(await body(seed));
      } catch (error) {
        if (!(error instanceof SimFailure)) throw error;
        const replay = replayCommand(expect.getState().testPath ?? '', expect.getState().currentTestName ?? '', seed);
        failures.push(`seed ${formatSeed(seed)} (replay: ${replay})\n${error.message}`);
      }
    }
    expect(failures.length, `${failures.length} of ${seeds.length} seeds failed:\n${failures[0] ?? ''}`).toBe(0);
  });
}

describe('health probes in seeded managed schedules', () => {
  runSeeds(
    'self-hosted: crashes, flaky probes and failing probes keep every invariant',
    seedsOf(SELF_HOSTED_SEEDS, 0),
    selfHostedSeed,
  );
  runSeeds(
    'sidecar: flaky and failing probes end as the candidate deserves',
    seedsOf(SIDECAR_SEEDS, 0x1000),
    sidecarSeed,
  );

  it.runIf(replaySeed === null)('the seeds reached every kind of outcome', () => {
    expect(totals.probeFailed).toBeGreaterThan(0);
    expect(totals.absorbed).toBeGreaterThan(0);
    expect(totals.complete).toBeGreaterThan(totals.absorbed);
  });
});
