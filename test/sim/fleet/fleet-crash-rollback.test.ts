/**
 * 100 controller crashes during a rollout that halts in its second wave and rolls the fleet back
 * (RollBackAll). Which operations a halted wave had started depends on when each failure was
 * seen, and a crash moves that by a moment, so the operations may differ from the uninterrupted
 * run's; the outcome may not: the same halt (wave, reason), the rollback completed, and every
 * machine back on the old version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OLD_VERSION } from './fleet-scenarios.js';
import { CRASHES, runWithAndWithoutCrashes } from './fleet-crash-support.js';
import type { RunResult } from './fleet-run.js';
import { printReplayOnFailure, PROPERTY_SIZE, RUN_TIMEOUT_MS, SEED } from './fleet-support.js';

printReplayOnFailure();

let runs: { uninterrupted: RunResult; crashed: RunResult; effects: number };

beforeAll(async () => {
  runs = await runWithAndWithoutCrashes(
    { failures: 'instance-type', onFailure: 'RollBackAll', budget: '1%' },
    PROPERTY_SIZE,
  );
}, 2 * RUN_TIMEOUT_MS);

afterAll(async () => {
  await runs?.uninterrupted.world.close();
  await runs?.crashed.world.close();
});

function outcome(run: RunResult): unknown {
  const status = run.statuses.get('fleet') as {
    phase: string;
    halt?: { wave: string; reason: string };
    rollback?: { phase: string };
  };
  return {
    phase: status.phase,
    halt: { wave: status.halt?.wave, reason: status.halt?.reason },
    rollback: status.rollback?.phase,
    versions: [...new Set([...run.world.machines.values()].map((machine) => machine.version))],
  };
}

describe(`${CRASHES} controller crashes during a fleet rollback on ${PROPERTY_SIZE} simulated machines (seed ${SEED})`, () => {
  it('every planned crash happened', () => {
    expect(runs.effects).toBeGreaterThan(CRASHES);
    expect(runs.crashed.world.restarts).toBe(CRASHES);
  });

  it('the uninterrupted run halts in the second wave and rolls back every machine it upgraded', () => {
    const status = runs.uninterrupted.statuses.get('fleet') as { rollback?: { rolledBack: number; size: number } };
    // More than the canary: the halted wave's machines that had completed are rolled back too.
    expect(status.rollback?.rolledBack).toBeGreaterThan(20);
    expect(status.rollback?.rolledBack).toBe(status.rollback?.size);
  });

  it('end with the same halt, the rollback completed and every machine on the old version', () => {
    const expected = {
      phase: 'RolledBack',
      halt: { wave: 'early', reason: 'FailureBudgetExceeded' },
      rollback: 'Completed',
      versions: [OLD_VERSION],
    };
    expect(outcome(runs.uninterrupted)).toEqual(expected);
    expect(outcome(runs.crashed)).toEqual(expected);
  });

  it('never exceeded a cap, created nothing after the halt, nor gave a machine two live operations', () => {
    expect(runs.crashed.monitor.violations).toEqual([]);
    expect(runs.uninterrupted.monitor.violations).toEqual([]);
  });
});
