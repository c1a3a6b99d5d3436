#!/usr/bin/env node
// Runs the whole test suite several times in a row while a CPU hog keeps one core busy, as a
// busy CI machine would, and says whether every run passed:
//   node scripts/steady-suite.mjs [--runs 3] [vitest args]   (after npm run build and npm run kube:build)
// The hog is a child process this script starts and always stops. Exits 1 when any run failed;
// prints each run's wall time and the failed files.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;
const vitestArgs = runsAt >= 0 ? args.filter((_, index) => index !== runsAt && index !== runsAt + 1) : args;
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs takes a positive integer');
  process.exit(2);
}

// One core's worth of busy work, for as long as this script lives.
const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
const stopHog = () => hog.exitCode === null && hog.kill('SIGKILL');
process.on('exit', stopHog);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const results = [];
for (let run = 1; run <= runs; run += 1) results.push(runSuite(run));
stopHog();
console.log('\n| run | result | wall | failed files |');
console.log('|---:|---|---:|---|');
for (const result of results)
  console.log(
    `| ${result.run} | ${result.passed ? 'passed' : 'FAILED'} | ${result.wallS.toFixed(0)} s | ${result.failed.join(', ')} |`,
  );
process.exit(results.every((result) => result.passed) ? 0 : 1);

function runSuite(run) {
  const scratch = mkdtempSync(join(tmpdir(), 'steady-suite-'));
  const report = join(scratch, 'files.json');
  const startedMs = performance.now();
  console.log(`\n— run ${run} of ${runs}, one core kept busy by pid ${hog.pid} —`);
  const outcome = spawnSync(
    'npx',
    ['vitest', 'run', '--reporter=dot', `--reporter=${join(here, 'file-times-reporter.mjs')}`, ...vitestArgs],
    { stdio: 'inherit', env: { ...process.env, FILE_TIMES_OUTPUT: report } },
  );
  const wallS = (performance.now() - startedMs) / 1000;
  let failed = ['(no report)'];
  try {
    failed = JSON.parse(readFileSync(report, 'utf8'))
      .filter((file) => file.status !== 'passed')
      .map((file) => relative(process.cwd(), file.name));
  } catch {
    // No report: the run itself failed; `failed` says so.
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { run, passed: outcome.status === 0 && failed.length === 0, wallS, failed };
}
