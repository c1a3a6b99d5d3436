/** Medians and the table of bench/planner. */

export interface PlannerRow {
  readonly machines: number;
  readonly unchangedMs: number;
  readonly changedMs: number;
  readonly waveStartMs: number;
  /** The baseline: the same unchanged snapshot planned without a memo. */
  readonly uncachedMs: number;
  readonly changedChildren: number;
}

/** The median time of `rounds` runs of `subject`, each after an unmeasured `before`. */
export function medianMs(rounds: number, subject: () => unknown, before: () => unknown = () => undefined): number {
  const times: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    before();
    const startedMs = performance.now();
    subject();
    times.push(performance.now() - startedMs);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

export function renderTable(rows: readonly PlannerRow[]): string {
  const lines = [
    '| machines | unchanged | 100 operations changed | a wave starts | without the memo (baseline) | baseline ÷ unchanged |',
    '|---:|---:|---:|---:|---:|---:|',
  ];
  const ms = (value: number): string => `${value.toFixed(2)} ms`;
  for (const row of rows) {
    const ratio = (row.uncachedMs / row.unchangedMs).toFixed(1);
    lines.push(
      `| ${row.machines} | ${ms(row.unchangedMs)} | ${ms(row.changedMs)} | ${ms(row.waveStartMs)} | ${ms(row.uncachedMs)} | ${ratio}× |`,
    );
  }
  return lines.join('\n');
}
