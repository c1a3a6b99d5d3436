#!/usr/bin/env node
// bench/tuf: what verifying a release through TUF costs. `agent-upgrade fetch --sha256 …` (the
// baseline: the digest given on the command line, no trust section) against the same fetch with
// `trust.mode: "tuf"` and no digest (a first refresh: root, timestamp, snapshot, targets), side by
// side in one run, over loopback from a separate server process that counts every request. Then
// a refresh with nothing new: the same fetch again with the metadata already trusted. Reports
// medians of wall time and peak RSS (GNU time), their ratio and difference, and the metadata
// requests of each kind of refresh. Exits non-zero only when a fetch fails.
//
//   npm run bench:tuf                                  # 200 MB, 3 rounds
//   node bench/tuf/run.mjs --sizes 10,200 --rounds 5 --markdown   # --verbose: every run on stderr
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { exit, parseArguments, requireTool } from './options.mjs';
import { renderReport } from './report.mjs';
import { makeReleaseArchive, median, startServer, summarize, timed } from '../common/measure.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
const member = `aks-flex-node-linux-${arch}`;
const VERSION = '1.0.0';
const options = parseArguments(process.argv.slice(2));
for (const tool of ['/usr/bin/time', 'tar', 'gzip']) requireTool(tool);
for (const built of ['dist/app/main/main.js', 'dist/app/node/demo/demo-signed-repo.js'])
  if (!existsSync(join(repo, built))) exit(`${built} is missing: run \`npm run build\` first`);
const { DemoSignedRepo } = await import(pathToFileURL(join(repo, 'dist/app/node/demo/demo-signed-repo.js')).href);
// bin/agent-upgrade starts through `env -S node`: let it find the Node that runs this script.
const childEnv = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };

const work = mkdtempSync(join(tmpdir(), 'agent-upgrade-bench-tuf-'));
const served = join(work, 'served');
mkdirSync(join(served, 'metadata'), { recursive: true });
mkdirSync(join(served, 'targets'));
const server = await startServer(join(repo, 'bench/tuf/serve.mjs'), served);
const base = `http://127.0.0.1:${server.port}`;
let caches = 0;
try {
  const plainConfig = writeConfig('plain.json', { artifact: { allowHttp: true } });
  const rows = [];
  for (const megabytes of options.sizes) {
    const archive = await makeReleaseArchive(join(served, 'targets'), work, megabytes, member);
    const rootFile = publish(archive);
    rows.push(await measure(archive, rootFile, plainConfig));
  }
  process.stdout.write(renderReport(rows, { ...options, cores: availableParallelism() }));
} catch (error) {
  process.stderr.write(`bench/tuf: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  server.child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
}

/**
 * Each round runs the three fetches one after another, the order rotating, so none always meets
 * a colder page cache or a busier neighbour: the baseline, TUF with an empty cache directory (a
 * first refresh: root, timestamp, snapshot, targets) and TUF with the metadata of an earlier fetch
 * (a refresh with nothing new published, what a node's every later fetch costs).
 */
async function measure(archive, rootFile, plainConfig) {
  const url = `${base}/targets/${archive.name}`;
  const warmConfig = tufConfig(rootFile, freshCacheDir());
  await counted(() => runFetch('prime', url, [], warmConfig));
  const fetches = {
    plain: () => counted(() => runFetch('baseline', url, ['--sha256', archive.sha256], plainConfig)),
    first: async () => {
      const cacheDir = freshCacheDir();
      const fetched = await counted(() => runFetch('first refresh', url, [], tufConfig(rootFile, cacheDir)));
      rmSync(cacheDir, { recursive: true, force: true });
      return fetched;
    },
    nothingNew: () => counted(() => runFetch('nothing new', url, [], warmConfig)),
  };
  const kinds = Object.keys(fetches);
  const runs = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let round = 0; round < options.rounds; round += 1)
    for (let turn = 0; turn < kinds.length; turn += 1) {
      const kind = kinds[(round + turn) % kinds.length];
      runs[kind].push(await fetches[kind]());
    }
  const plain = runs.plain.map((run) => run.metadata).find((metadata) => metadata.count !== 0);
  if (plain !== undefined) fail(`the baseline asked for metadata: ${plain.paths.join(', ')}`);
  const results = (kind) => runs[kind].map((run) => run.result);
  return {
    megabytes: archive.megabytes,
    archiveBytes: archive.bytes,
    plain: summarize(results('plain')),
    tuf: { ...summarize(results('first')), paired: paired(results('first'), results('plain')) },
    warm: { ...summarize(results('nothingNew')), paired: paired(results('nothingNew'), results('plain')) },
    firstRefresh: sameEveryTime(runs.first, 'first refresh'),
    nothingNew: sameEveryTime(runs.nothingNew, 'refresh with nothing new'),
    alone: refreshAlone(rootFile, archive),
  };
}

/** Wall-time ratios of runs of the same round: the median, and the range. */
function paired(runs, baselines) {
  const ratios = runs.map((run, round) => run.seconds / baselines[round].seconds);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** The refresh alone, timed inside a fresh process each round (bench/tuf/refresh-alone.mjs). */
function refreshAlone(rootFile, archive) {
  const runs = [];
  for (let round = 0; round < options.rounds; round += 1) {
    const cacheDir = freshCacheDir();
    const script = join(repo, 'bench/tuf/refresh-alone.mjs');
    const run = spawnSync(process.execPath, [script, `${base}/metadata/`, rootFile, archive.name, cacheDir], {
      encoding: 'utf8',
    });
    if (run.status !== 0) fail(`bench/tuf/refresh-alone.mjs failed: ${run.stdout}${run.stderr}`);
    runs.push(JSON.parse(run.stdout));
    rmSync(cacheDir, { recursive: true, force: true });
  }
  const requests = (key) => runs.map((run) => ({ metadata: metadataOf(run[key]) }));
  return {
    firstMs: median(runs.map((run) => run.firstMs)),
    nothingNewMs: median(runs.map((run) => run.nothingNewMs)),
    firstRequests: sameEveryTime(requests('firstRequests'), 'first refresh alone'),
    nothingNewRequests: sameEveryTime(requests('nothingNewRequests'), 'refresh with nothing new alone'),
  };
}

function runFetch(kind, url, extraArguments, config) {
  const output = join(work, 'out');
  rmSync(output, { force: true });
  const result = timedOk(join(repo, 'bin/agent-upgrade'), [
    'fetch',
    '--url',
    url,
    ...extraArguments,
    '--output',
    output,
    '--json',
    '--config',
    config,
  ]);
  // --verbose: every run on stderr, to see the spread behind the medians.
  if (options.verbose) {
    const { seconds, rssMiB, cpuSeconds } = result;
    process.stderr.write(`${kind}: ${seconds} s wall, ${cpuSeconds.toFixed(2)} s CPU, ${rssMiB.toFixed(1)} MiB\n`);
  }
  let answer;
  try {
    answer = JSON.parse(result.stdout);
  } catch {
    fail(`agent-upgrade fetch printed no JSON: ${result.stdout}${result.stderr}`);
  }
  if (answer.ok !== true) fail(`agent-upgrade fetch failed: ${result.stdout}`);
  const signed = extraArguments.length === 0;
  if (signed && answer.fetch?.signedVersion !== VERSION)
    fail(`the TUF fetch did not verify through trust (signedVersion ${answer.fetch?.signedVersion})`);
  if (!signed && answer.fetch?.digestVerified !== true) fail('the baseline fetch did not verify its digest');
  return result;
}

/** Runs `body` and returns what it returned with the metadata requests the server saw meanwhile. */
async function counted(body) {
  await readCounts();
  const result = body();
  const counts = await readCounts();
  const targets = Object.entries(counts).filter(([key]) => key.includes(' /targets/'));
  if (targets.length !== 1 || targets[0][1] !== 1)
    fail(`expected one request for the archive: ${JSON.stringify(counts)}`);
  return { result, metadata: metadataOf(counts) };
}

/** The metadata requests among a server's counts: how many, and each (`GET /metadata/… 200`), in order. */
function metadataOf(counts) {
  const metadata = Object.entries(counts).filter(([key]) => key.includes(' /metadata/'));
  const paths = metadata.map(([key, times]) => (times === 1 ? key : `${key} ×${times}`));
  return { count: metadata.reduce((sum, [, times]) => sum + times, 0), paths };
}

async function readCounts() {
  try {
    const response = await fetch(`${base}/__counts?reset=1`);
    return await response.json();
  } catch (error) {
    const why = server.child.exitCode ?? server.child.signalCode;
    fail(`the benchmark server ${why === null ? 'did not answer' : `exited (${why})`}: ${error.cause ?? error}`);
  }
}

function sameEveryTime(runs, what) {
  const requests = runs.map((run) => run.metadata);
  const first = JSON.stringify(requests[0]);
  if (requests.some((each) => JSON.stringify(each) !== first))
    fail(`the ${what} made different requests in different rounds: ${JSON.stringify(requests)}`);
  return requests[0];
}

/** Signs the archive as the one target of a new repository; returns the root to trust first. */
function publish(archive) {
  const bytes = readFileSync(join(served, 'targets', archive.name));
  const metadata = new DemoSignedRepo(Date.now()).publish([{ path: archive.name, bytes, version: VERSION, arch }]);
  rmSync(join(served, 'metadata'), { recursive: true, force: true });
  mkdirSync(join(served, 'metadata'));
  for (const [name, content] of metadata) writeFileSync(join(served, 'metadata', name), content);
  // As the agent's installer puts it: a regular file only root may write (the CLI checks, as root).
  const rootFile = join(work, `root-${archive.megabytes}mb.json`);
  writeFileSync(rootFile, metadata.get('1.root.json'));
  chmodSync(rootFile, 0o644);
  return rootFile;
}

function tufConfig(rootFile, cacheDir) {
  const trust = {
    mode: 'tuf',
    rootFile,
    metadataUrl: `${base}/metadata/`,
    targetsUrl: `${base}/targets/`,
    cacheDir,
  };
  return writeConfig(`tuf-${caches}.json`, { artifact: { allowHttp: true }, trust });
}

function freshCacheDir() {
  caches += 1;
  return join(work, `trust-cache-${caches}`);
}

function writeConfig(name, value) {
  const path = join(work, name);
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** A failed fetch: thrown, so the server and the scratch directory are still cleaned up. */
function fail(message) {
  throw new Error(message);
}

/** A timed run that must succeed, with the CLI on the Node that runs this script. */
function timedOk(command, args) {
  const result = timed(command, args, childEnv);
  if (result.status !== 0)
    fail(`${command} ${args[0]} failed (exit ${result.status}): ${result.stdout}${result.stderr}`);
  return result;
}
