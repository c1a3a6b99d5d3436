/** What the fleet simulation's test files share: the seed and size, the report line, the run's end state. */
import { afterEach } from 'vitest';
import { currentReplayCommand, seedFromEnv } from '../harness/index.js';
import type { RunResult } from './fleet-run.js';

/** The harness's one seed variable, SIM_SEED, as in every simulation (docs/testing.md). */
export const SEED = seedFromEnv(1);
/**
 * The fleet of the scenarios that show the numbers that grow with the fleet (fleet-crash: caps,
 * crash convergence, writes per machine, reads, status size; fleet-halts; fleet-window-abort).
 */
export const SIZE = Number(process.env['FLEET_SIZE'] ?? 10_000);
/**
 * The fleet of the scenarios whose properties hold per event and per machine — faults, vanishing
 * machines, deletions by hand, overlapping rollouts, a fleet rollback — checked the same way at
 * any size (the planner bounds each plan's creates and lists, not the fleet); 2,000 machines
 * still spread every wave over every architecture, zone and instance type. FLEET_SIZE sets both.
 */
export const PROPERTY_SIZE = Number(process.env['FLEET_SIZE'] ?? 2_000);
export const HOUR_MS = 3_600_000;
/** Generous: a 10,000-machine run takes one to two minutes on two cores. */
export const RUN_TIMEOUT_MS = 900_000;

/** Prints the line that runs a failed test of the calling file again, with its seed. */
export function printReplayOnFailure(): void {
  afterEach((context) => {
    if (context.task.result?.state === 'fail') console.log(`replay: ${currentReplayCommand(SEED)}`);
  });
}

export function report(run: RunResult, label: string): void {
  const statusBytes = Math.max(0, ...[...run.monitor.records.values()].map((record) => record.maxStatusBytes));
  console.log(
    `fleet simulation, ${label}: ${run.world.machines.size} machines, seed ${SEED}, ` +
      `${Math.round(run.virtualMs / 60_000)} virtual min in ${Math.round(run.realMs / 1000)} s, ${run.instants} instants, ` +
      `${run.world.fake.requestCount()} requests, largest status ${statusBytes} bytes, controller restarts ${run.world.restarts}`,
  );
}

/** Where a run ended, in terms a second run of the same plan must reproduce. */
export function endState(run: RunResult): unknown {
  const operations = [...run.monitor.children.values()]
    .map((child) => `${child.name} ${child.machine} ${child.purpose} ${child.phase} ${child.reason}`)
    .sort();
  const versions = [...run.world.machines.values()].map((machine) => `${machine.name}=${machine.version}`).sort();
  const rollouts = [...run.statuses].map(([name, status]) => ({
    name,
    phase: status['phase'],
    progress: status['progress'],
    counts: status['counts'],
    halt: (status['halt'] as { reason?: unknown; wave?: unknown } | undefined)?.reason ?? null,
    failures: (status['failures'] as { byReason?: unknown } | undefined)?.byReason ?? null,
  }));
  return { operations, versions, rollouts };
}
