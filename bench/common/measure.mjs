// What the side-by-side benchmarks (bench/fetch, bench/tuf) share: a release archive of random
// bytes, a loopback server in a process of its own, and runs timed by GNU time, summarised by
// their medians.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A single-member release archive of `megabytes` MB of random bytes (they do not compress, so the
 * archive is as large as the binary: the worst case) at `directory/release-<N>mb.tar.gz`.
 */
export async function makeReleaseArchive(directory, scratch, megabytes, member) {
  const name = `release-${megabytes}mb.tar.gz`;
  const staging = join(scratch, `member-${megabytes}`);
  mkdirSync(staging);
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
  return { megabytes, name, sha256: hash.digest('hex'), bytes };
}

/** Starts `node script directory`, which prints the loopback port it listens on. */
export async function startServer(script, directory) {
  const child = spawn(process.execPath, [script, directory], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
    child.once('exit', () => reject(new Error('the benchmark server exited')));
  });
  return { child, port };
}

/**
 * Runs `command` under GNU time: wall seconds, peak RSS of the largest process (MiB), CPU seconds
 * (user + system), its output and exit status.
 */
export function timed(command, args, env = process.env) {
  const run = spawnSync('/usr/bin/time', ['-f', '%e %M %U %S', command, ...args], {
    encoding: 'utf8',
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  const last = run.stderr.trim().split('\n').pop() ?? '';
  const [seconds, kib, user, system] = last.split(' ').map(Number);
  return {
    status: run.status,
    seconds,
    rssMiB: kib / 1024,
    cpuSeconds: user + system,
    stdout: run.stdout,
    stderr: run.stderr,
  };
}

/** The medians of the runs' wall time, RSS and CPU time. */
export function summarize(results) {
  const of = (key) => median(results.map((result) => result[key]));
  return { seconds: of('seconds'), rssMiB: of('rssMiB'), cpuSeconds: of('cpuSeconds') };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** True when `tool` is on PATH. */
export function hasTool(tool) {
  return spawnSync('bash', ['-c', `command -v ${tool}`]).status === 0;
}
