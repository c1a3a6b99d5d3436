import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runDaemonLoad, type LoadResult } from '../../test/support/kube/load-world.js';
import { assertBuildCurrent } from '../../test/support/systemd/systemd-host.js';

const OTHERS = Number(process.env.LOAD_OTHERS ?? 1000);
const OURS = Number(process.env.LOAD_OURS ?? 100);
const MIB = 1024;

/** RSS of a bare `node -e` that loads nothing: the baseline every Node process pays. */
function bareNodeRssKiB(): number {
  const run = spawnSync(
    process.execPath,
    ['-e', "const s=require('fs').readFileSync('/proc/self/status','utf8');console.log(/VmHWM:\\s+(\\d+)/.exec(s)[1])"],
    { encoding: 'utf8' },
  );
  return Number(run.stdout.trim());
}

function row(label: string, result: LoadResult, baselineKiB: number): string {
  const perUpgrade = Object.entries(result.requestsPerUpgrade)
    .map(([method, count]) => `${method} ${count.toFixed(1)}`)
    .join(', ');
  return `| ${label} | ${result.completed}/${result.upgrades} | ${result.othersTouched} | ${result.notExactlyOnce.length} | ${perUpgrade} | ${result.watchRequests} | ${(result.rssKiB.idle / MIB).toFixed(1)} | ${(result.rssKiB.end / MIB).toFixed(1)} | ${(result.rssKiB.peak / MIB).toFixed(1)} | ${(result.rssKiB.peak / baselineKiB).toFixed(2)}× | ${(result.elapsedMs / result.upgrades).toFixed(0)} ms |`;
}

/**
 * `npm run bench:daemon`: the daemon against the fake API server with 1,000 operations for other
 * machines and 100 sequential upgrades of its own, with and without server-side field selectors.
 * Reports requests per upgrade and memory (peak RSS, and its ratio to a bare `node -e`).
 */
describe('daemon load', () => {
  it(`${OTHERS} other operations, ${OURS} upgrades`, async () => {
    assertBuildCurrent();
    const baselineKiB = bareNodeRssKiB();
    const withSelector = await runDaemonLoad({ others: OTHERS, ours: OURS, selectableFields: true });
    const clientSide = await runDaemonLoad({ others: OTHERS, ours: OURS, selectableFields: false });
    const table = [
      `bare node -e peak RSS: ${(baselineKiB / MIB).toFixed(1)} MiB`,
      '',
      '| field selector | completed | others touched | not exactly once | requests per upgrade (non-watch) | watch requests | idle RSS MiB | RSS after MiB | peak RSS MiB | peak / bare node | time per upgrade |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      row('server-side', withSelector, baselineKiB),
      row('client-side', clientSide, baselineKiB),
    ].join('\n');
    console.log(`\n${table}\n`);
    for (const result of [withSelector, clientSide]) {
      expect({
        completed: result.completed,
        othersTouched: result.othersTouched,
        notExactlyOnce: result.notExactlyOnce,
      }).toEqual({ completed: OURS, othersTouched: 0, notExactlyOnce: [] });
      // docs/benchmarks.md#daemon-under-load: the daemon's idle RSS, at start and after the
      // upgrades.
      expect(Math.max(result.rssKiB.idle, result.rssKiB.end)).toBeLessThanOrEqual(100 * MIB);
    }
  }, 900_000);
});
