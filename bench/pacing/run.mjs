#!/usr/bin/env node
// bench/pacing: the controller's reconcile loop over the real Kubernetes adapter and its token
// bucket, against the fake API server of test/support/kube on 127.0.0.1, in real time: how fast
// a wave is dispatched with slow-start batches against one create at a time, the write rate at
// QPS 20, and a 429 with Retry-After. See docs/benchmarks.md#pacing.
//   node bench/pacing/run.mjs [--size 10000] [--paced-size 400] [--seed 1] [--write-latency-ms 10]
// Prints the tables, then one JSON line; exits 1 when a target is missed.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTsRunner } from '../ts-runner.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const size = Number(option('--size', '10000'));
const pacedSize = Number(option('--paced-size', '400'));
const seed = Number(option('--seed', '1'));
const writeLatencyMs = Number(option('--write-latency-ms', '10'));
if (!(writeLatencyMs >= 0)) throw new Error('--write-latency-ms takes a number of milliseconds');
if (![size, pacedSize].every((value) => Number.isInteger(value) && value >= 200))
  throw new Error('--size and --paced-size take whole numbers of at least 200');

// The fake API server and the fleet's parts are TypeScript (test/): Vite's module runner loads
// them, and the controller's modules, as vitest would, without a build.
const runner = await openTsRunner('bench-pacing');
const bench = await runner.import(join(here, 'entry.ts'));
const startedMs = performance.now();
const result = await bench.runPacingBench({
  size,
  pacedSize,
  seed,
  writeLatencyMs,
  log: (line) => console.error(line),
});
console.log(`\n${bench.renderPacingReport(result)}\n`);
console.log(
  JSON.stringify({ bench: 'pacing', elapsedSeconds: Math.round((performance.now() - startedMs) / 1000), ...result }),
);
await runner.close();
if (!Object.values(result.targets).every(Boolean)) process.exitCode = 1;
