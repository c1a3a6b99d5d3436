#!/usr/bin/env node
// Runs the test suite (or the files given) and prints how long each file took, slowest first, as
// the Markdown table docs/testing.md records: `node scripts/test-times.mjs [--top N] [vitest args]`.
// The wall time beside the sum of the files' times shows how much ran in parallel.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;
const vitestArgs = topAt >= 0 ? args.filter((_, index) => index !== topAt && index !== topAt + 1) : args;
const scratch = mkdtempSync(join(tmpdir(), 'test-times-'));
const report = join(scratch, 'files.json');
const startedMs = performance.now();
const run = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', `--reporter=${join(here, 'file-times-reporter.mjs')}`, ...vitestArgs],
  { stdio: 'inherit', env: { ...process.env, FILE_TIMES_OUTPUT: report } },
);
const wallS = (performance.now() - startedMs) / 1000;
let files;
try {
  files = JSON.parse(readFileSync(report, 'utf8')).map((file) => ({
    ...file,
    name: relative(process.cwd(), file.name),
  }));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
files.sort((a, b) => b.seconds - a.seconds);
const sumS = files.reduce((sum, file) => sum + file.seconds, 0);
console.log(`\n${files.length} files, wall ${wallS.toFixed(0)} s, sum of file times ${sumS.toFixed(0)} s\n`);
console.log('| file | tests | time |');
console.log('|---|---:|---:|');
for (const file of files.slice(0, top))
  console.log(
    `| ${file.name} | ${file.tests} | ${file.seconds.toFixed(1)} s${file.status === 'passed' ? '' : ` (${file.status})`} |`,
  );
process.exit(run.status ?? 1);
