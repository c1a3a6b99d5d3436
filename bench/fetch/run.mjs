#!/usr/bin/env node
// bench/fetch: `agent-upgrade fetch` against the shell pipeline `curl | tee >(sha256sum) | tar -xz`,
// side by side in one run, over loopback from a separate server process. Reports medians of
// wall time and peak RSS (GNU time) per archive size, and the wall-time ratio.
//
//   npm run bench:fetch                      # sizes 10,100,200,256 MB, 3 rounds
//   node bench/fetch/run.mjs --sizes 200 --rounds 5 --markdown
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasTool, makeReleaseArchive, startServer, summarize, timed } from '../common/measure.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const member = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
const options = parseArguments(process.argv.slice(2));
for (const tool of ['/usr/bin/time', 'curl', 'tar', 'sha256sum']) requireTool(tool);
if (!existsSync(join(repo, 'dist/app/main/main.js'))) fail('run `npm run build` first');

const work = mkdtempSync(join(tmpdir(), 'agent-upgrade-bench-'));
const server = await startServer(join(repo, 'bench/fetch/serve.mjs'), work);
try {
  const rows = [];
  for (const megabytes of options.sizes) {
    const archive = await makeReleaseArchive(work, work, megabytes, member);
    rows.push(await measure(server.port, archive, megabytes));
  }
  report(rows);
} finally {
  server.child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}

async function measure(port, archive, megabytes) {
  const url = `http://127.0.0.1:${port}/${archive.name}?sig=bench-canary`;
  const runs = { node: [], shell: [] };
  for (let round = 0; round < options.rounds; round += 1) {
    // Alternate who goes first, so neither always meets a colder cache.
    const order = round % 2 === 0 ? ['node', 'shell'] : ['shell', 'node'];
    for (const who of order) runs[who].push(who === 'node' ? runNode(url, archive) : runShell(url, archive));
  }
  return { megabytes, archiveBytes: archive.bytes, node: summarize(runs.node), shell: summarize(runs.shell) };
}

function runNode(url, archive) {
  const output = join(work, 'out-node');
  rmSync(output, { force: true });
  const result = timedOk(join(repo, 'bin/agent-upgrade'), [
    'fetch',
    '--url',
    url,
    '--sha256',
    archive.sha256,
    '--output',
    output,
    '--json',
  ]);
  if (!JSON.parse(result.stdout).ok) fail(`agent-upgrade fetch failed: ${result.stdout}`);
  return result;
}

function runShell(url, archive) {
  const output = join(work, 'out-shell');
  rmSync(output, { recursive: true, force: true });
  mkdirSync(output);
  const script = `set -o pipefail; curl -s "$1" | tee >(sha256sum > "$2/sum") | tar -xz -C "$2"`;
  const result = timedOk('bash', ['-c', script, 'bench', url, output]);
  const sum = readFileSync(join(output, 'sum'), 'utf8').split(' ')[0];
  if (sum !== archive.sha256) fail('the shell pipeline computed a different digest');
  return result;
}

function report(rows) {
  const lines = [
    `fetch benchmark: ${options.rounds} rounds, medians; node ${process.version}; ${new Date().toISOString().slice(0, 10)}`,
    '',
    '| archive | agent-upgrade fetch | RSS | curl \\| tee >(sha256sum) \\| tar -xz | RSS (largest process) | wall-time ratio |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${(row.archiveBytes / 1e6).toFixed(0)} MB | ${row.node.seconds.toFixed(2)} s | ${row.node.rssMiB.toFixed(0)} MiB | ${row.shell.seconds.toFixed(2)} s | ${row.shell.rssMiB.toFixed(0)} MiB | ${(row.node.seconds / row.shell.seconds).toFixed(2)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

function parseArguments(argv) {
  const parsed = { sizes: [10, 100, 200, 256], rounds: 3 };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === '--sizes' && value !== undefined) parsed.sizes = value.split(',').map(Number);
    else if (flag === '--rounds' && value !== undefined) parsed.rounds = Number(value);
    else continue;
    index += 1;
  }
  if (parsed.sizes.some((size) => !(size > 0 && size <= 256)) || !(parsed.rounds >= 1 && parsed.rounds <= 20))
    fail('sizes must be 1..256 MB and rounds 1..20');
  return parsed;
}

function requireTool(tool) {
  if (!hasTool(tool)) fail(`${tool} is needed (Debian: apt-get install -y time curl tar coreutils)`);
}

function fail(message) {
  process.stderr.write(`bench/fetch: ${message}\n`);
  process.exit(1);
}

/** A timed run that must succeed. */
function timedOk(command, args) {
  const result = timed(command, args);
  if (result.status !== 0) fail(`${command} failed: ${result.stderr}`);
  return result;
}
