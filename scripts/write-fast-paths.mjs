#!/usr/bin/env node
// Part of `npm run build`: records what the CLI prints for the few command lines that need no
// host at all (`version`, `--version`, `--help`, …) into dist/app/main/fast-paths.json, by
// running the real CLI on them in memory. bin/agent-upgrade answers exactly these argument
// lists from that file instead of loading the CLI, so they start in about the time of Node
// itself; test/cli/fast-paths.test.ts checks the answers equal the CLI's own.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const { createCli, runCli } = await import(join(dist, 'app/main/create-cli.js'));
const { FAST_PATH_ARGUMENTS } = await import(join(dist, 'app/main/fast-path-arguments.js'));

async function capture(argv) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = [];
  const err = [];
  stdout.on('data', (chunk) => out.push(chunk));
  stderr.on('data', (chunk) => err.push(chunk));
  const unused = () => {
    throw new Error(`${argv.join(' ')} must not need the host`);
  };
  const exitCode = await runCli(createCli(), argv, {
    stdin: new PassThrough(),
    stdout,
    stderr,
    env: {},
    colorDepth: 1,
    openUpgrader: unused,
    host: unused,
  });
  return { exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

const answers = {};
for (const argv of FAST_PATH_ARGUMENTS) answers[JSON.stringify(argv)] = await capture(argv);
writeFileSync(join(dist, 'app/main/fast-paths.json'), `${JSON.stringify(answers, null, 2)}\n`);
