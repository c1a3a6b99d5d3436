/**
 * `rollout status NAME --watch` over a MemoryRolloutStore whose rollout moves on after each read
 * (virtual time): one line per change off a terminal, frames redrawn in place on one, and an
 * exit code for how the rollout ended. The frames themselves are golden files at three widths.
 */
import { describe, expect, it } from 'vitest';
import { MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { viewOf } from '../../src/app/fleet/rollout/rollout-view.js';
import { renderWatchFrame } from '../../src/app/fleet/cli/rollout-watch-render.js';
import { expectGolden } from '../support/golden.js';
import { runCliInMemory } from '../support/run-cli.js';
import { HALTED_STATUS, NAME, putRollout } from './rollout-cli-fixtures.js';

const progressing = (cursor: number, inFlight: number) => ({
  ...HALTED_STATUS,
  phase: 'Progressing',
  halt: undefined,
  progress: `${4 + cursor}/400`,
  counts: { ...HALTED_STATUS.counts, inFlight, failed: 0 },
  failures: { sample: [], byReason: {}, byLabel: {} },
  waves: [
    HALTED_STATUS.waves[0],
    { ...HALTED_STATUS.waves[1], phase: 'Progressing', cursor, failureBudget: { allowed: 0, used: 0 } },
  ],
});
const ended = (phase: string) => ({
  ...progressing(36, 0),
  phase,
  halt: phase === 'Halted' ? HALTED_STATUS.halt : undefined,
});

/** A store whose rollout shows `statuses` one after the other, one per read, the last one from then on. */
function storeShowing(statuses: readonly unknown[]): MemoryRolloutStore {
  const store = new MemoryRolloutStore();
  putRollout(store, { state: 'Run' }, statuses[0]);
  for (const status of statuses.slice(1)) store.interfere(1, (rollout) => ({ ...rollout, status }));
  return store;
}

async function watch(store: MemoryRolloutStore, extra: string[] = [], stdoutColumns?: number) {
  const clock = new MemoryClock();
  const run = await runCliInMemory(['rollout', 'status', NAME, '--watch', ...extra], {
    rolloutStore: store,
    clock,
    ...(stdoutColumns === undefined ? {} : { stdoutColumns }),
  });
  return { ...run, elapsedMs: clock.monotonicMs() };
}

describe('rollout status --watch', () => {
  it('prints one line per change off a terminal and exits 0 when the rollout succeeds', async () => {
    const store = storeShowing([progressing(2, 2), progressing(2, 2), progressing(10, 4), ended('Succeeded')]);
    const run = await watch(store);
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(' ')[2])).toEqual(['Progressing', 'Progressing', 'Succeeded']);
    expect(run.elapsedMs).toBe(3 * 2_000);
  });

  it.each([
    ['Halted', 6],
    ['RolledBack', 3],
    ['Failed', 1],
    ['Aborted', 1],
  ])('exits with the code that says the rollout ended %s', async (phase, exitCode) => {
    expect((await watch(storeShowing([progressing(2, 2), ended(phase)]))).exitCode).toBe(exitCode);
  });

  it('gives up after --timeout with E_TIMEOUT, and refuses a --timeout that is not whole seconds', async () => {
    const run = await watch(storeShowing([progressing(2, 2)]), ['--timeout', '30', '--json']);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_TIMEOUT' } });
    expect(run.elapsedMs).toBe(30_000);
    const refused = await watch(storeShowing([progressing(2, 2)]), ['--timeout', '1.5', '--json']);
    expect(refused.exitCode).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE' } });
  });

  it('prints one JSON document, the rollout as it ended, with -o json', async () => {
    const run = await watch(storeShowing([progressing(2, 2), ended('Succeeded')]), ['-o', 'json']);
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, rollout: { name: NAME, phase: 'Succeeded' } });
  });

  it('ends at once on a rollout that does not exist, and retries a cluster that does not answer', async () => {
    const missing = await watch(new MemoryRolloutStore(), ['--json']);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'E_NOT_FOUND' } });
    expect(missing.elapsedMs).toBe(0);
    const flaky = storeShowing([progressing(2, 2), ended('Succeeded')]);
    flaky.failNext(new (await import('../../src/domain/common/port-errors.js')).ClusterError(503, 'answered 503'));
    expect((await watch(flaky)).exitCode).toBe(0);
  });

  it('redraws its frame in place on a terminal', async () => {
    const run = await watch(storeShowing([progressing(2, 2), progressing(10, 4), ended('Succeeded')]), [], 80);
    expect(run.exitCode).toBe(0);
    // ESC [ n F (up n lines) then ESC [ J (clear below): how the previous frame is erased.
    const redraw = new RegExp(`${String.fromCharCode(27)}\\[\\d+F${String.fromCharCode(27)}\\[J`);
    const frames = run.stdout.split(redraw);
    expect(frames).toHaveLength(3);
    const first = frames[0] ?? '';
    expect(run.stdout).toContain(`\u001b[${first.trimEnd().split('\n').length}F\u001b[J`);
  });
});

describe('the watch frame', () => {
  const store = storeShowing([{ ...HALTED_STATUS, phase: 'Progressing', halt: undefined }]);
  it.each([40, 80, 120])('fits a terminal %i columns wide', async (width) => {
    const rollout = await store.get(NAME);
    if (rollout === null) throw new Error('the fixture holds no rollout');
    const frame = renderWatchFrame(viewOf(rollout, Date.UTC(2025, 2, 3, 8, 42)), width);
    expect(Math.max(...frame.map((line) => line.length))).toBeLessThan(width);
    expectGolden(`rollout-watch-${width}.txt`, `${frame.join('\n')}\n`);
  });
});
