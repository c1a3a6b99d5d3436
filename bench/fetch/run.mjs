#!/usr/bin/env node
// bench/fetch: `agent-upgrade fetch` against the shell pipeline `curl | tee >(sha256sum) | tar -xz`,
// side by side in one run, over loopback from a separate server process. Reports medians of
// wall time and peak RSS (GNU time) per archive size, and the wall-time ratio.
//
//   npm run bench:fetch                      # sizes 10,100,200,256 MB, 3 rounds
//   node bench/fetch/run.mjs --sizes 200 --rounds 5 --markdown
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const member = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
const options = parseArguments(process.argv.slice(2));
for (const tool of ['/usr/bin/time', 'curl', 'tar', 'sha256sum']) requireTool(tool);
if (!existsSync(join(repo, 'dist/app/main/main.js'))) fail('run `npm run build` first');

const work = mkdtempSync(join(tmpdir(), 'agent-upgrade-bench-'));
const server = await startServer(work);
try {
  const rows = [];
  for (const megabytes of options.sizes) {
    const archive = await makeArchive(work, megabytes);
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
  const result = timed(join(repo, 'bin/agent-upgrade'), [
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
  const result = timed('bash', ['-c', script, 'bench', url, output]);
  const sum = readFileSync(join(output, 'sum'), 'utf8').split(' ')[0];
  if (sum !== archive.sha256) fail('the shell pipeline computed a different digest');
  return result;
}

/** Wall seconds and peak RSS (KiB) of the largest process, from GNU time. */
function timed(command, args) {
  const run = spawnSync('/usr/bin/time', ['-f', '%e %M', command, ...args], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) fail(`${command} failed: ${run.stderr}`);
  const last = run.stderr.trim().split('\n').pop() ?? '';
  const [seconds, kib] = last.split(' ').map(Number);
  return { seconds, rssMiB: kib / 1024, stdout: run.stdout };
}

function summarize(results) {
  return { seconds: median(results.map((r) => r.seconds)), rssMiB: median(results.map((r) => r.rssMiB)) };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function makeArchive(directory, megabytes) {
  const name = `release-${megabytes}mb.tar.gz`;
  const staging = join(directory, `member-${megabytes}`);
  mkdirSync(staging);
  // Random bytes do not compress, so the archive is as large as the binary: the worst case.
  execFileSync('bash', [
    '-c',
    `head -c ${megabytes * 1_000_000} /dev/urandom > "$1/${member}" && tar -C "$1" -cf - ${member} | gzip -1 > "$2"`,
    'make',
    staging,
    join(directory, name),
  ]);
  rmSync(staging, { recursive: true, force: true });
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(join(directory, name))) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { name, sha256: hash.digest('hex'), bytes };
}

async function startServer(directory) {
  const child = spawn(process.execPath, [join(repo, 'bench/fetch/serve.mjs'), directory], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
    child.once('exit', () => reject(new Error('the benchmark server exited')));
  });
  return { child, port };
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
  if (spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0)
    fail(`${tool} is needed (Debian: apt-get install -y time curl tar coreutils)`);
}

function fail(message) {
  process.stderr.write(`bench/fetch: ${message}\n`);
  process.exit(1);
}
