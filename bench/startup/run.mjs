#!/usr/bin/env node
// bench/startup: how long `agent-upgrade version` and `agent-upgrade --help` take against
// `node -e 0` (target ≤ 1.5×; docs/benchmarks.md#start-up documents ≤ 2×), run as installed
// (bin/agent-upgrade), interleaved, medians.
//   node bench/startup/run.mjs [--rounds 21] [--binary path/to/sea]   (after npm run build)
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const rounds = Number(option('--rounds', '21'));
const binary = option('--binary', join(repo, 'bin', 'agent-upgrade'));

const subjects = [
  ['node -e 0', process.execPath, ['-e', '0']],
  ['agent-upgrade version', binary, ['version']],
  ['agent-upgrade --help', binary, ['--help']],
];

function timeOnce(command, commandArgs) {
  const started = process.hrtime.bigint();
  const run = spawnSync(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} failed: ${run.stderr}`);
  return elapsedMs;
}

const samples = new Map(subjects.map(([label]) => [label, []]));
for (const [, command, commandArgs] of subjects) timeOnce(command, commandArgs); // warm the page cache
for (let round = 0; round < rounds; round += 1) {
  for (const [label, command, commandArgs] of subjects) samples.get(label).push(timeOnce(command, commandArgs));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const baseline = median(samples.get('node -e 0'));
console.log(
  `startup benchmark: ${rounds} interleaved rounds, medians; node ${process.version}; ${new Date().toISOString().slice(0, 10)}; binary ${binary}\n`,
);
console.log('| command | median | ratio to node -e 0 |');
console.log('|---|---|---|');
let worst = 0;
for (const [label] of subjects) {
  const value = median(samples.get(label));
  const ratio = value / baseline;
  if (label !== 'node -e 0') worst = Math.max(worst, ratio);
  console.log(`| ${label} | ${value.toFixed(0)} ms | ${ratio.toFixed(2)} |`);
}
console.log(`\ntarget ≤ 1.50: ${worst <= 1.5 ? 'met' : 'NOT met'} (worst ${worst.toFixed(2)})`);
process.exitCode = worst <= 1.5 ? 0 : 1;
