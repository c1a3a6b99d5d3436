/**
 * A good release on a simulated fleet (2,000 machines by default, fleet-support.ts says why;
 * FLEET_SIZE and SIM_SEED change it), through the production composition of the controller over the fake API server, with
 * the faults of a real cluster: 409/429/500 answers, watches dropped every ten minutes, machines
 * that vanish, operations deleted by hand mid-upgrade (whose daemons finish anyway and report the
 * new version late). The oracle checks the caps at every event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetOf, fleetSpec, NEW_VERSION } from './fleet-scenarios.js';
import { controllerReads, writesPerMachine } from './fleet-measures.js';
import { runFleet, type RunResult } from './fleet-run.js';
import { HOUR_MS, printReplayOnFailure, PROPERTY_SIZE, report, RUN_TIMEOUT_MS, SEED } from './fleet-support.js';

printReplayOnFailure();

const VANISH = 20;
const DELETE_BY_HAND = 10;
let run: RunResult;

beforeAll(async () => {
  run = await runFleet({
    seed: SEED,
    machines: fleetOf(PROPERTY_SIZE, SEED),
    failures: 'none',
    rollouts: [{ name: 'fleet', spec: fleetSpec() }],
    faults: { writeFaultShare: 0.01, watchDropEveryMs: 600_000, vanish: VANISH, deleteByHand: DELETE_BY_HAND },
    limitMs: 24 * HOUR_MS,
  });
  report(run, 'a good release, with faults');
}, RUN_TIMEOUT_MS);

afterAll(async () => {
  await run?.world.close();
});

describe(`a good release on ${PROPERTY_SIZE} simulated machines, with faults (seed ${SEED})`, () => {
  it('goes through every wave to Succeeded without skipping a machine: the lost ones report the new version late', () => {
    const status = run.statuses.get('fleet') as {
      phase: string;
      counts: { succeeded: number; lost: number; pending: number; excluded: { alreadyAtTarget: number } };
      waves: { phase: string; lost?: number; lostAtTarget?: number }[];
    };
    expect(status.phase).toBe('Succeeded');
    expect(status.waves.map((wave) => wave.phase)).toEqual(['Completed', 'Completed', 'Completed', 'Completed']);
    const present = [...run.world.machines.values()].filter((machine) => !machine.vanished);
    // Operations are deleted by hand while InProgress: their daemons finish anyway and report it.
    expect(present.filter((machine) => machine.version !== NEW_VERSION).map((machine) => machine.name)).toEqual([]);
    const lost = status.waves.reduce((sum, wave) => sum + (wave.lost ?? 0), 0);
    console.log(`${lost} operations lost, all at the new version`);
    expect(lost).toBeGreaterThan(0);
    expect(status.waves.reduce((sum, wave) => sum + (wave.lostAtTarget ?? 0), 0)).toBe(lost);
    expect(status.counts).toMatchObject({ lost: 0, pending: 0 });
    expect(status.counts.succeeded + status.counts.excluded.alreadyAtTarget).toBe(present.length);
    expect(present.length).toBeGreaterThanOrEqual(PROPERTY_SIZE - VANISH);
  });

  it('never exceeded maxInFlight or maxUnavailable, nor gave a machine two live operations, at any event', () => {
    expect(run.monitor.violations).toEqual([]);
    expect(run.monitor.maxLivePerMachine).toBe(1);
  });

  it('kept the status under 64 KiB', () => {
    expect(run.monitor.records.get('fleet')?.maxStatusBytes).toBeLessThan(64 * 1024);
  });

  it('read only through lists and watches', () => {
    const reads = controllerReads(run);
    console.log(
      `controller requests by method ${JSON.stringify(reads.byMethod)}, reads ${JSON.stringify(reads.informed)}`,
    );
    expect(reads.informed['get'] ?? 0).toBe(0);
    expect(reads.informed['watch']).toBeGreaterThan(0);
  });

  it('cost each machine 4 writes on average, retries of the refused requests included', () => {
    const writes = writesPerMachine(run);
    console.log(
      `writes per machine with faults: max ${writes.maxPerMachine}, mean ${writes.meanPerMachine.toFixed(2)}, ${JSON.stringify(writes.byKind)}`,
    );
    // One create, two status writes, one version report; an injected 409/429/500 costs a retry of
    // its machine, and a lost or vanished machine writes less. (Without faults, at most 4 each:
    // fleet-crash.test.ts.)
    expect(writes.meanPerMachine).toBeLessThanOrEqual(4.05);
  });
});
