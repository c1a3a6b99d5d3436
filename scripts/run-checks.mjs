// Runs npm scripts in lanes, the lanes at once and the scripts of a lane (joined by `+`) one after
// another, and fails when any fails: `npm run check` runs lint in one lane and the type check,
// build, formatting and dependency rules in another. Each script is mostly one process on one
// core, so two lanes suit 2 cores (all five at once was slower: they fight over the cores). The
// Go test tools' lanes are no-ops once their caches hold them; cold, helm builds in a lane of its
// own beside the kube-apiserver, whose build leaves a core idle part of the time. A script's
// output is printed in one piece when it ends, with its time, so logs never interleave.
import { spawn } from 'node:child_process';

const lanes = process.argv.slice(2).map((lane) => lane.split('+'));
if (lanes.length === 0 || lanes.flat().some((name) => name === '')) {
  console.error('usage: node scripts/run-checks.mjs SCRIPT[+SCRIPT...]...');
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

/** Runs a lane's scripts one after another, all of them even when one fails. */
async function runLane(names) {
  const results = [];
  for (const name of names) results.push(await runScript(name));
  return results;
}

const startMs = Date.now();
const results = (await Promise.all(lanes.map(runLane))).flat();
const failed = results.filter((result) => result.status !== 0).map((result) => result.name);
const wallS = ((Date.now() - startMs) / 1000).toFixed(1);
if (failed.length > 0) {
  console.error(`\nchecks failed: ${failed.join(', ')} (${wallS} s)`);
  process.exit(1);
}
console.log(`\nchecks passed: ${results.map((result) => result.name).join(', ')} in ${wallS} s`);
