/**
 * bench/planner (`npm run bench:planner`): what one plan of the rollout planner costs at 1,000,
 * 5,000, 10,000 and 20,000 machines, with the memo a controller keeps between plans
 * (planner-memo.ts) and, as the baseline measured in the same run, without it. Three moments of a
 * rollout whose last wave runs: nothing changed since the last plan; 100 operations changed state;
 * the plan that starts the last wave. Medians; BENCH_PLANNER_SIZES=1000,10000 picks the sizes.
 * Targets at 10,000 machines: ≤ 5 ms unchanged, ≤ 15 ms with changes (docs/benchmarks.md#planner).
 */
import { expect, it } from 'vitest';
import { planRollout } from '../../src/domain/fleet/decide/plan-rollout.js';
import { PlannerMemo } from '../../src/domain/fleet/order/planner-memo.js';
import { medianMs, renderTable, type PlannerRow } from './planner-measures.js';
import { rolloutMoments } from './planner-world.js';

const SIZES = (process.env['BENCH_PLANNER_SIZES'] ?? '1000,5000,10000,20000').split(',').map(Number);

function measure(size: number): PlannerRow {
  const moments = rolloutMoments(size);
  const { running, changed, beforeWave, waveStart } = moments;
  const memo = new PlannerMemo();
  // Warm-up: the first plans compile the planner; a controller plans thousands of times.
  for (let round = 0; round < 10; round += 1) {
    planRollout(changed.snapshot, changed.nowMs, memo);
    planRollout(running.snapshot, running.nowMs, memo);
  }
  const unchangedMs = medianMs(31, () => planRollout(running.snapshot, running.nowMs, memo));
  // Each measured plan follows a plan of the snapshot before it, so the memo sees just the change.
  const changedMs = medianMs(
    31,
    () => planRollout(changed.snapshot, changed.nowMs, memo),
    () => planRollout(running.snapshot, running.nowMs, memo),
  );
  const waveStartMs = medianMs(
    31,
    () => planRollout(waveStart.snapshot, waveStart.nowMs, memo),
    () => planRollout(beforeWave.snapshot, beforeWave.nowMs, memo),
  );
  const uncachedMs = medianMs(7, () => planRollout(running.snapshot, running.nowMs));
  return { machines: size, unchangedMs, changedMs, waveStartMs, uncachedMs, changedChildren: moments.changedChildren };
}

it('plans at each fleet size, with and without the memo', () => {
  const rows = SIZES.map(measure);
  console.log(`\n${renderTable(rows)}\n${JSON.stringify({ bench: 'planner', rows })}`);
  const at10k = rows.find((row) => row.machines === 10_000);
  if (at10k !== undefined) {
    expect(at10k.unchangedMs).toBeLessThanOrEqual(5);
    expect(Math.max(at10k.changedMs, at10k.waveStartMs)).toBeLessThanOrEqual(15);
  }
}, 1_800_000);
