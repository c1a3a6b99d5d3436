// Runs the given npm scripts at once (`npm run check` passes the type check, lint, formatting,
// dependency rules, build and the kube-apiserver build) and fails when any fails. Each is mostly
// one process on one core, so on 2 cores running them together takes about half as long as one
// after another. A script's output is printed in one piece when it ends, with its time, so the
// logs of different checks never interleave.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  console.error('usage: node scripts/run-checks.mjs SCRIPT...');
  process.exit(2);
}

/** Runs `npm run -s name`; resolves with its exit status, its combined output and its time. */
function runScript(name) {
  const startMs = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code, signal) => {
      const seconds = (Date.now() - startMs) / 1000;
      const output = Buffer.concat(chunks).toString('utf8');
      const status = code ?? 1;
      console.log(
        `\n── ${name}: ${status === 0 ? 'ok' : `failed (${signal ?? `exit ${status}`})`} in ${seconds.toFixed(1)} s`,
      );
      if (output.trim() !== '') process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      resolve({ name, status, seconds });
    });
  });
}

const startMs = Date.now();
const results = await Promise.all(scripts.map(runScript));
const failed = results.filter((result) => result.status !== 0).map((result) => result.name);
const wallS = ((Date.now() - startMs) / 1000).toFixed(1);
if (failed.length > 0) {
  console.error(`\nchecks failed: ${failed.join(', ')} (${wallS} s)`);
  process.exit(1);
}
console.log(`\nchecks passed: ${scripts.join(', ')} in ${wallS} s`);
