import { defineConfig } from 'vitest/config';
import { LongPolesFirst } from './test/support/long-poles-first.js';

/**
 * Test files that spend their time waiting on other processes — the built-in supervisor, a real
 * kube-apiserver, the CLI, servers on loopback that stall on purpose — rather than computing.
 * Each starts what it needs on its own paths and ports, so more of them run at once than there
 * are cores.
 */
const WAITING = [
  'test/supervisor/**',
  'test/kube-real/**',
  'test/hostile/**',
  'test/cli/**',
  'test/package/**',
  'test/load/**',
  'test/support-tests/**',
  'test/adapters/supervisor/**',
  'test/adapters/kubernetes/**',
  'test/prometheus/**',
]
  .map((folder) => `${folder}/*.test.ts`)
  .concat([
    // Real timers in a fake world: watch deadlines, lease expiries (3 CPU-seconds in 9 to 23 s).
    'test/contracts/kube-apiserver.fake.test.ts',
    'test/app/controller/leader-election.test.ts',
    // The embedding example's agent runs real seconds through its health gate and watch window.
    'test/docs/embedding-example.test.ts',
  ]);

/**
 * Files that replace a module with vi.mock: the other groups reuse each worker's modules from
 * file to file, where a mock would come too late, so these run each in a fresh process.
 */
const MOCKING = ['test/adapters/nspawn/nspawn-swap-race.test.ts', 'test/adapters/kubernetes/cluster-platform.test.ts'];

/**
 * Files that boot a private systemd (test/support/systemd). Each boots in a cgroup namespace of
 * its own, so several at once never touch each other's units; they wait like the others.
 */
const PRIVATE_SYSTEMD = ['test/systemd/*.test.ts', 'test/e2e/*.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    // The slowest files first in each group, with or without vitest's cache (a clean clone has none).
    sequence: { sequencer: LongPolesFirst },
    // The default output, and each file's time (printed as a table with FILE_TIMES_TABLE=N).
    reporters: ['default', './scripts/file-times-reporter.mjs'],
    // clipanion 3.2.1 imports a directory from its ESM entry; inlining lets vite resolve it.
    server: { deps: { inline: ['clipanion'] } },
    // Two groups, one after the other (vitest gives each group its own worker count): the files
    // that compute, one worker per core; then the files that wait, four at a time, beside the
    // few that mock a module. A worker keeps its modules from file to file, except for those few:
    // the suite is CPU-bound on 2 cores, and a fresh process per file cost about 1 CPU-second
    // each (the waiting group took 379 s instead of 469 s without it).
    projects: [
      {
        extends: true,
        test: {
          name: 'compute',
          include: ['test/**/*.test.ts'],
          exclude: [...WAITING, ...PRIVATE_SYSTEMD, ...MOCKING],
          maxWorkers: 2,
          // Importing src again for each of 120 files cost about 50 s of the group's 270.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'waiting',
          include: [...WAITING, ...PRIVATE_SYSTEMD],
          exclude: MOCKING,
          maxWorkers: 4,
          isolate: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: MOCKING,
          maxWorkers: 4,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
