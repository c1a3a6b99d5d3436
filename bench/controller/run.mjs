#!/usr/bin/env node
// bench/controller: the real `agent-upgrade controller` process (bin/agent-upgrade, as installed)
// against the fake API server of test/support/kube on 127.0.0.1, in real time, at each fleet
// size: its memory, its reconcile times (from its /metrics), the time from a failed canary to
// Halted, and the API requests per machine of a complete rollout. See docs/benchmarks.md#controller.
//   node bench/controller/run.mjs [--sizes 1000,10000] [--halt-rounds 5] [--get-samples 200] [--seed 1]
//   (after npm run build). Prints the tables, then one JSON line; exits 1 when a target is missed.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTsRunner } from '../ts-runner.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const sizes = option('--sizes', '1000,10000')
  .split(',')
  .map((text) => Number(text.trim()));
if (sizes.some((size) => !Number.isInteger(size) || size < 1))
  throw new Error('--sizes takes positive integers: 1000,10000');
const haltRounds = Number(option('--halt-rounds', '5'));
const getSamples = Number(option('--get-samples', '200'));
const seed = Number(option('--seed', '1'));

// The fake API server and the simulated daemons are TypeScript (test/): Vite's module runner
// loads them as vitest would, without a build of their own. It stays open for the whole run,
// since they import modules lazily (the Kubernetes watch client).
const runner = await openTsRunner('bench-controller');
const bench = await runner.import(join(here, 'entry.ts'));
const startedMs = performance.now();
const result = await bench.runControllerBench({
  sizes: [...sizes].sort((a, b) => a - b),
  haltRounds,
  getSamples,
  seed,
  log: (line) => console.error(line),
});
console.log(`\n${bench.renderReport(result)}\n`);
console.log(
  JSON.stringify({
    bench: 'controller',
    elapsedSeconds: Math.round((performance.now() - startedMs) / 1000),
    ...result,
  }),
);
await runner.close();
const largest = result.sizes.at(-1);
const met =
  largest === undefined || (largest.memory.steady.peakKiB <= 256 * 1024 && bench.writesPerMachine(largest) <= 4);
process.exitCode = met ? 0 : 1;
