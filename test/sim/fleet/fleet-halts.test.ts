/**
 * Bad releases on a simulated fleet (10,000 machines by default): one that fails everywhere and
 * one that fails only on arm64. (One that fails on an instance type, found in the second wave and
 * rolled back fleet-wide, is fleet-crash-rollback.test.ts.) Zero creates after the halting status,
 * and failures per wave within the budget plus maxInFlight, are the oracle's, checked at every event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fleetOf, fleetSpec, NEW_RELEASE } from './fleet-scenarios.js';
import { RELEASES_PATH } from '../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { NO_FAULTS, runFleet, type RunResult } from './fleet-run.js';
import { HOUR_MS, printReplayOnFailure, report, RUN_TIMEOUT_MS, SEED, SIZE } from './fleet-support.js';

printReplayOnFailure();

interface Status {
  readonly phase: string;
  readonly halt?: { readonly wave: string; readonly reason: string };
  readonly failures: { readonly byLabel: Record<string, number>; readonly byReason: Record<string, number> };
}

let run: RunResult | null = null;
afterEach(async () => {
  await run?.world.close();
  run = null;
});

const statusOf = (result: RunResult): Status => result.statuses.get('fleet') as unknown as Status;

async function quarantined(result: RunResult): Promise<unknown> {
  const release = (await result.world.get(`${RELEASES_PATH}/${NEW_RELEASE}`)) as {
    spec: { quarantine?: { quarantined?: unknown } };
  };
  return release.spec.quarantine?.quarantined;
}

describe(`bad releases on ${SIZE} simulated machines (seed ${SEED})`, () => {
  it(
    'a release that fails everywhere stops in the canary wave, is quarantined, and nothing is created after the halt',
    async () => {
      run = await runFleet({
        seed: SEED,
        machines: fleetOf(SIZE, SEED),
        failures: 'everywhere',
        rollouts: [{ name: 'fleet', spec: fleetSpec() }],
        faults: NO_FAULTS,
        limitMs: 6 * HOUR_MS,
      });
      report(run, 'fails everywhere');
      expect(statusOf(run).phase).toBe('Halted');
      expect(statusOf(run).halt).toMatchObject({ wave: 'canary', reason: 'FailureBudgetExceeded' });
      const children = [...run.monitor.children.values()];
      expect(children.every((child) => child.wave === 'canary')).toBe(true);
      expect(children.length).toBeLessThanOrEqual(20);
      expect(run.monitor.violations).toEqual([]);
      expect(await quarantined(run)).toBe(true);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'a release that fails only on arm64 halts, and failures.byLabel names kubernetes.io/arch=arm64 alone',
    async () => {
      run = await runFleet({
        seed: SEED,
        machines: fleetOf(SIZE, SEED),
        failures: 'arm64',
        rollouts: [{ name: 'fleet', spec: fleetSpec() }],
        faults: NO_FAULTS,
        limitMs: 6 * HOUR_MS,
      });
      report(run, 'fails on arm64');
      const status = statusOf(run);
      expect(status.phase).toBe('Halted');
      expect(status.failures.byLabel['kubernetes.io/arch=arm64']).toBeGreaterThan(0);
      expect(status.failures.byLabel['kubernetes.io/arch=amd64']).toBeUndefined();
      const failedArch = [...run.monitor.children.values()]
        .filter((child) => child.phase === 'Failed')
        .map((child) => run?.world.machines.get(child.machine)?.labels['kubernetes.io/arch']);
      expect(new Set(failedArch)).toEqual(new Set(['arm64']));
      expect(run.monitor.violations).toEqual([]);
    },
    RUN_TIMEOUT_MS,
  );
});
