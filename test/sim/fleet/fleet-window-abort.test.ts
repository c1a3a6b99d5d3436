/**
 * A rollout held to a maintenance window with seconds in its duration, then aborted while the
 * operations it started before the window closed still run: nothing is created before the
 * window's first second or from its last one on, the wait for it ends at the second it opens, and
 * the aborted rollout counts its operations until none is live (its status is what the In-Flight
 * column and the metrics show).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS_PATH } from '../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { fleetOf, fleetSpec } from './fleet-scenarios.js';
import { NO_FAULTS, runFleet, type RunResult } from './fleet-run.js';
import { HOUR_MS, printReplayOnFailure, report, RUN_TIMEOUT_MS, SEED, SIZE } from './fleet-support.js';
import { START_MS } from './fleet-world.js';

printReplayOnFailure();

const MINUTE_MS = 60_000;
/** The run starts at 12:00 UTC: the window is 12:05:00 to 12:12:30. */
const WINDOW = { start: '12:05', duration: '7m30s' };
const OPENS = new Date(START_MS + 5 * MINUTE_MS).toISOString().replace('.000Z', 'Z');
const CLOSES = new Date(START_MS + 12.5 * MINUTE_MS).toISOString().replace('.000Z', 'Z');
/** Operations finish every few seconds (the daemons' grid), and each frees a slot: the last create comes this close to the end. */
const LAST_CREATE_AFTER = new Date(START_MS + 12.5 * MINUTE_MS - 10_000).toISOString().replace('.000Z', 'Z');
/** Half a minute after the window closed, while its last operations still run. */
const ABORT_AFTER_MS = 13 * MINUTE_MS;

let run: RunResult;
let created: string[];

beforeAll(async () => {
  const spec = fleetSpec({ schedule: { windows: [WINDOW] } });
  const strategy = spec['strategy'] as Record<string, unknown>;
  strategy['waves'] = [{ name: 'all', percent: 100, maxInFlight: '5%', failureBudget: '1%' }];
  run = await runFleet({
    seed: SEED,
    machines: fleetOf(SIZE, SEED),
    failures: 'none',
    rollouts: [{ name: 'windowed', spec }],
    changes: [{ name: 'windowed', afterMs: ABORT_AFTER_MS, spec: { state: 'Abort' } }],
    faults: NO_FAULTS,
    limitMs: 2 * HOUR_MS,
  });
  report(run, 'a window with seconds, then an abort');
  const operations = (await run.world.get(OPERATIONS_PATH)) as { items: { metadata: { creationTimestamp: string } }[] };
  created = operations.items.map((item) => item.metadata.creationTimestamp).sort();
}, RUN_TIMEOUT_MS);

afterAll(async () => {
  await run?.world.close();
});

describe(`a windowed rollout aborted after its window on ${SIZE} simulated machines (seed ${SEED})`, () => {
  it('creates operations from the second the window opens to the second before it closes', () => {
    expect(created.length).toBeGreaterThan(0);
    expect(created[0]).toBe(OPENS);
    const last = created[created.length - 1]!;
    expect(last < CLOSES && last >= LAST_CREATE_AFTER, `last create at ${last}`).toBe(true);
  });

  it('counts what the abort left running until none is live', () => {
    const status = run.statuses.get('windowed') as { phase: string; counts: { inFlight: number; succeeded: number } };
    const complete = [...run.monitor.children.values()].filter((child) => child.phase === 'Complete').length;
    expect(status.phase).toBe('Aborted');
    expect(status.counts).toMatchObject({ inFlight: 0, succeeded: complete });
    expect(complete).toBe(created.length);
  });

  it('never exceeded maxInFlight or maxUnavailable at any event', () => {
    expect(run.monitor.violations).toEqual([]);
  });
});
