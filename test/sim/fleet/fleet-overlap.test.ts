/**
 * Two rollouts whose targets overlap, the second created while the first is under way: a machine
 * the first holds is a conflict for the second (the older rollout owns it) until its operation
 * ends; no machine ever has two live operations, at any event, and both rollouts end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetOf, fleetSpec, NEW_VERSION } from './fleet-scenarios.js';
import { NO_FAULTS, runFleet, type RunResult } from './fleet-run.js';
import { HOUR_MS, printReplayOnFailure, PROPERTY_SIZE, report, RUN_TIMEOUT_MS, SEED } from './fleet-support.js';

printReplayOnFailure();

let run: RunResult;

beforeAll(async () => {
  const zoneOne = { matchLabels: { 'topology.kubernetes.io/zone': 'westeurope-1' } };
  run = await runFleet({
    seed: SEED,
    machines: fleetOf(PROPERTY_SIZE, SEED),
    failures: 'none',
    rollouts: [
      { name: 'fleet', spec: fleetSpec() },
      // Zone 1 only, started while the fleet rollout runs its second wave.
      { name: 'zone-one', spec: fleetSpec({ targets: { selector: zoneOne } }), afterMs: 15 * 60_000 },
    ],
    faults: NO_FAULTS,
    limitMs: 24 * HOUR_MS,
  });
  report(run, 'two overlapping rollouts');
}, RUN_TIMEOUT_MS);

afterAll(async () => {
  await run?.world.close();
});

describe(`two overlapping rollouts on ${PROPERTY_SIZE} simulated machines (seed ${SEED})`, () => {
  it('never give a machine two live operations, at any event', () => {
    expect(run.monitor.maxLivePerMachine).toBe(1);
    expect(run.monitor.violations).toEqual([]);
  });

  it('both end Succeeded, the second counting the machines the first held or upgraded', () => {
    const fleet = run.statuses.get('fleet') as { phase: string };
    const zone = run.statuses.get('zone-one') as {
      phase: string;
      counts: { excluded: { conflict: number; alreadyAtTarget: number }; succeeded: number };
    };
    expect(fleet.phase).toBe('Succeeded');
    expect(zone.phase).toBe('Succeeded');
    expect(zone.counts.excluded.alreadyAtTarget + zone.counts.succeeded).toBeGreaterThan(0);
    const versions = new Set([...run.world.machines.values()].map((machine) => machine.version));
    expect(versions).toEqual(new Set([NEW_VERSION]));
  });
});
