/** The controller benchmark's tables (Markdown, as docs/benchmarks.md shows them) and its JSON line. */
import { RECONCILE_SETTLE_MS } from '../../src/app/fleet/controller/controller-options.js';
import type { BenchResult, SizeResult } from './controller-bench.js';
import { mib } from './measures.js';
import type { Verb } from './measures.js';

/** The verbs shown per machine; watches (a few streams) and the Lease are counted apart. */
const PER_MACHINE_VERBS: readonly Verb[] = ['list', 'get', 'create', 'update', 'patch'];

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const ratio = (a: number, b: number): string => (b > 0 ? `${fixed(a / b, 2)}×` : 'n/a');
const thousands = (value: number): string => value.toLocaleString('en-US');

const writes = (verbs: Record<string, number>): number =>
  (verbs['create'] ?? 0) + (verbs['update'] ?? 0) + (verbs['patch'] ?? 0) + (verbs['delete'] ?? 0);

/**
 * The writes each machine costs (the spec's ≤ 4): the controller's create of its operation, and
 * its daemon's status patches and version report, per machine.
 */
export function writesPerMachine(size: SizeResult): number {
  const creates = size.controller.byVerbAndResource['create machineoperations'] ?? 0;
  return (creates + writes(size.daemons.byVerb)) / size.machines;
}

/** Every write the controller and the daemons sent (the rollout's status updates and Events too), per machine; Lease renewals aside. */
export function allWritesPerMachine(size: SizeResult): number {
  return (writes(size.controller.byVerb) + writes(size.daemons.byVerb)) / size.machines;
}

export function renderReport(result: BenchResult): string {
  const { sizes } = result;
  return [
    ...memoryTable(result),
    ...timingTable(sizes),
    ...haltTable(sizes),
    ...requestTable(sizes),
    ...requestsByResource(sizes),
    ...scaling(sizes),
  ].join('\n');
}

/** The header line (the baseline) and the memory table. */
function memoryTable(result: BenchResult): string[] {
  const { baseline, sizes } = result;
  const base = baseline.emptyCluster;
  const lines: string[] = [];
  lines.push(
    `controller benchmark: ${result.date}, ${result.cores} cores, Node ${result.node}; ` +
      `baseline: the controller on an empty cluster RSS ${mib(base.rssKiB)} MiB, peak ${mib(base.peakKiB)} MiB; ` +
      `agent-upgrade version peak ${baseline.versionPeakKiB === null ? 'n/a' : `${mib(baseline.versionPeakKiB)} MiB`}`,
    '',
    '| machines | operations | idle RSS (Nodes cached) | RSS, all operations created | steady RSS 10 s after the rollout (range) | peak RSS (VmHWM) | peak / empty cluster | steady / empty cluster |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const size of sizes) {
    const { memory } = size;
    lines.push(
      `| ${thousands(size.machines)} | ${thousands(size.operations)} | ${mib(memory.idle.rssKiB)} MiB | ` +
        `${memory.allCreated === null ? 'n/a' : `${mib(memory.allCreated.rssKiB)} MiB`} | ` +
        `${mib(memory.steady.rssKiB)} MiB (${mib(memory.steadyRangeKiB.min)}–${mib(memory.steadyRangeKiB.max)}) | ` +
        `${mib(memory.steady.peakKiB)} MiB | ${ratio(memory.steady.peakKiB, base.peakKiB)} | ${ratio(memory.steady.rssKiB, base.rssKiB)} |`,
    );
  }
  return lines;
}

/** Rollout time, CPU and reconcile durations. */
function timingTable(sizes: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    '| machines | rollout to Succeeded | controller CPU | reconciles | mean | p50 (buckets) | p95 (buckets) | halt rounds: reconciles | mean | p50 | p95 |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const size of sizes) {
    const { reconcile, reconcileHaltRounds: halts } = size;
    lines.push(
      `| ${thousands(size.machines)} | ${fixed(size.rolloutMs / 1000, 1)} s | ${fixed(size.controllerCpuMs / 1000, 1)} s | ` +
        `${reconcile.count} | ${fixed(reconcile.meanMs, 1)} ms | ${fixed(reconcile.p50Ms, 1)} ms | ${fixed(reconcile.p95Ms, 1)} ms | ` +
        `${halts.count} | ${fixed(halts.meanMs, 1)} ms | ${fixed(halts.p50Ms, 1)} ms | ${fixed(halts.p95Ms, 1)} ms |`,
    );
  }
  return lines;
}

/** From a failure to Halted, against the settle window and a plain GET. */
function haltTable(sizes: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    `| machines | failure → Halted (median) | rounds, min–max | beyond the ${RECONCILE_SETTLE_MS} ms settle window | plain GET round trip (median) | ratio to the GET | quiet before the failure (min) |`,
    '|---|---|---|---|---|---|---|',
  );
  for (const size of sizes) {
    const times = size.halts.map((halt) => halt.ms);
    lines.push(
      `| ${thousands(size.machines)} | ${fixed(size.haltMedianMs, 0)} ms | ${times.length}, ${fixed(Math.min(...times), 0)}–${fixed(Math.max(...times), 0)} ms | ` +
        `${fixed(size.haltMedianMs - RECONCILE_SETTLE_MS, 0)} ms | ${fixed(size.getRoundTripMs.median, 2)} ms | ` +
        `${fixed(size.haltMedianMs / size.getRoundTripMs.median, 0)}× | ${fixed(Math.min(...size.halts.map((halt) => halt.quietBeforeMs)), 0)} ms |`,
    );
  }
  return lines;
}

/** Requests and writes per machine. */
function requestTable(sizes: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    `| machines | controller ${PER_MACHINE_VERBS.join(' / ')} per machine | controller watches | controller Lease requests | daemon writes per machine | writes per machine (create + daemon) | all writes per machine |`,
    '|---|---|---|---|---|---|---|',
  );
  for (const size of sizes) {
    const per = (count: number): string => fixed(count / size.machines, 3);
    const verbs = PER_MACHINE_VERBS.map((verb) => per(size.controller.byVerb[verb]));
    const lease = Object.entries(size.controller.lease)
      .map(([verb, count]) => `${verb} ${count}`)
      .join(', ');
    lines.push(
      `| ${thousands(size.machines)} | ${verbs.join(' / ')} | ${size.controller.byVerb.watch} | ${lease} | ${per(writes(size.daemons.byVerb))} | ${fixed(writesPerMachine(size), 3)} | ${fixed(allWritesPerMachine(size), 3)} |`,
    );
  }
  return lines;
}

function requestsByResource(sizes: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  lines.push('', 'controller requests by verb and resource:');
  for (const size of sizes) {
    const entries = Object.entries(size.controller.byVerbAndResource).sort(([a], [b]) => a.localeCompare(b));
    lines.push(`  ${thousands(size.machines)}: ${entries.map(([key, count]) => `${key} ${count}`).join(', ')}`);
  }
  return lines;
}

/** The largest size against the smallest, and the largest against the targets. */
function scaling(sizes: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  const smallest = sizes[0];
  const largest = sizes.at(-1);
  if (smallest !== undefined && largest !== undefined && largest !== smallest) {
    const label = `${largest.machines}/${smallest.machines}`;
    lines.push(
      '',
      `ratios ${label} (machines ×${fixed(largest.machines / smallest.machines, 0)}): ` +
        `peak RSS ${ratio(largest.memory.steady.peakKiB, smallest.memory.steady.peakKiB)}, ` +
        `steady RSS ${ratio(largest.memory.steady.rssKiB, smallest.memory.steady.rssKiB)}, ` +
        `reconcile mean ${ratio(largest.reconcile.meanMs, smallest.reconcile.meanMs)}, ` +
        `p50 ${ratio(largest.reconcile.p50Ms, smallest.reconcile.p50Ms)}, p95 ${ratio(largest.reconcile.p95Ms, smallest.reconcile.p95Ms)}, ` +
        `halt-round reconcile mean ${ratio(largest.reconcileHaltRounds.meanMs, smallest.reconcileHaltRounds.meanMs)}, ` +
        `failure → Halted beyond the settle window ${ratio(largest.haltMedianMs - RECONCILE_SETTLE_MS, smallest.haltMedianMs - RECONCILE_SETTLE_MS)}, ` +
        `failure → Halted ${ratio(largest.haltMedianMs, smallest.haltMedianMs)}`,
    );
  }
  if (largest !== undefined) {
    const peakMiB = largest.memory.steady.peakKiB / 1024;
    lines.push(
      `targets at ${thousands(largest.machines)} machines: peak RSS ${fixed(peakMiB, 1)} MiB ≤ 256 MiB ${peakMiB <= 256 ? 'met' : 'NOT met'}; ` +
        `writes per machine ${fixed(writesPerMachine(largest), 2)} ≤ 4 ${writesPerMachine(largest) <= 4 ? 'met' : 'NOT met'}`,
    );
  }
  return lines;
}
