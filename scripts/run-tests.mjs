#!/usr/bin/env node
// The test step of `npm run check`: the `compute` group of the suite, then its `waiting` group
// beside the unit-level tests on the other Node lines (scripts/other-runtimes.mjs). The waiting
// group spends much of its time waiting on processes it started, so the other runtimes' tests
// fill cores it leaves idle instead of adding their time after the suite; the suite is steady
// beside a busy core (docs/testing.md). The other runtimes' output is printed in one piece when
// the suite's own is done, so the two never interleave.
//   node scripts/run-tests.mjs
import { spawn } from 'node:child_process';

const vitest = ['node_modules/vitest/vitest.mjs', 'run'];

/** Runs `command`; resolves with its exit status and, when `capture`, its combined output. */
function run(command, args, { capture }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const chunks = [];
    child.stdout?.on('data', (chunk) => chunks.push(chunk));
    child.stderr?.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code) => resolve({ status: code ?? 1, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

const startedMs = Date.now();
const compute = await run(process.execPath, [...vitest, '--project', 'compute'], { capture: false });
const runtimes = run(process.execPath, ['scripts/other-runtimes.mjs'], { capture: true });
const waiting = await run(process.execPath, [...vitest, '--project', 'waiting'], { capture: false });
const other = await runtimes;
process.stdout.write(
  `\n── the unit-level tests on the other Node lines (run beside the waiting group)\n${other.output}`,
);
const failed = [
  ...(compute.status === 0 ? [] : ['compute']),
  ...(waiting.status === 0 ? [] : ['waiting']),
  ...(other.status === 0 ? [] : ['other runtimes']),
];
const wallS = ((Date.now() - startedMs) / 1000).toFixed(0);
if (failed.length > 0) {
  console.error(`\ntests failed: ${failed.join(', ')} (${wallS} s)`);
  process.exit(1);
}
console.log(`\ntests passed: compute, waiting and the other runtimes in ${wallS} s`);
