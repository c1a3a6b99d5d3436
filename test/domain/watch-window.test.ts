import { describe, expect, it } from 'vitest';
import { POLICY_FAILURES } from '../../src/domain/node/recovery/policy-failures.js';
import type {
  RunProgress,
  StartupInput,
  StartupObservation,
} from '../../src/domain/node/recovery/recovery-vocabulary.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import { withCompleted } from '../../src/domain/node/record/upgrade-record.js';
import {
  crashedInWindow,
  needsRestartBaseline,
  newWatchWindow,
  parseWatch,
  serializeWatch,
  watchSliceMs,
  withRestartBaseline,
  withWatched,
  type WatchWindow,
} from '../../src/domain/node/record/watch-window.js';
import { DIGEST, onCandidate, recovering, SELF, start, switched } from './recovery-policy-fixtures.js';

const TEN_MINUTES_MS = 600_000;
const BOOT = 'boot-1';

function window(overrides: Partial<WatchWindow> = {}): WatchWindow {
  return {
    ...newWatchWindow({
      owner: 'managed',
      candidate: 'green',
      candidateDigest: DIGEST,
      windowMs: TEN_MINUTES_MS,
      startedAt: '2026-12-02T10:00:00.000Z',
      restartEpoch: BOOT,
      restartsAtStart: 2,
    }),
    ...overrides,
  };
}

/** A self-hosted daemon that is the candidate and proved it healthy, with a window configured. */
function proven(
  watch: WatchWindow | null,
  observed: Partial<StartupObservation> = {},
  progress: Partial<RunProgress> = {},
): StartupInput {
  const restarts = { restartEpoch: BOOT, restarts: 2 };
  return {
    ...start(switched, { ...onCandidate, candidateHealth: 'healthy', restarts, ...observed }, progress),
    watch,
    watchMs: TEN_MINUTES_MS,
  };
}

describe('the watch-window document', () => {
  it('round-trips through its canonical text and refuses what it does not know', () => {
    const watched = withWatched(window(), 60_000);
    expect(parseWatch(serializeWatch(watched))).toEqual({ ok: true, value: watched });
    const text = serializeWatch(watched);
    const refused = [
      text.replace('"managed"', '"other"'),
      text.replace('"watchedMs": 60000', '"watchedMs": 600001'),
      text.replace('"windowMs": 600000', '"windowMs": 0'),
      text.replace('"startedAt": "2026-12-02T10:00:00.000Z"', '"startedAt": "yesterday"'),
      text.replace('"restartsAtStart": 2', '"restartsAtStart": -1'),
      text.replace('{', '{"extra": 1,'),
    ];
    expect(refused.map((bad) => parseWatch(bad)).map((result) => (result.ok ? 'ok' : result.failure.code))).toEqual(
      refused.map(() => 'E_RECORD'),
    );
  });

  it('adds watched time up to the window and cuts it into ten slices of at least a second', () => {
    expect(withWatched(window(), TEN_MINUTES_MS + 5).watchedMs).toBe(TEN_MINUTES_MS);
    expect(watchSliceMs(window())).toBe(60_000);
    expect(watchSliceMs(withWatched(window(), 570_000))).toBe(30_000);
    expect(watchSliceMs(window({ windowMs: 3_000 }))).toBe(1_000);
  });

  it('counts a crash only as more automatic restarts in the same lifetime of the count', () => {
    const opened = window();
    expect(crashedInWindow(opened, { restartEpoch: BOOT, restarts: 3 })).toBe(true);
    expect(crashedInWindow(opened, { restartEpoch: BOOT, restarts: 2 })).toBe(false);
    expect(crashedInWindow(opened, { restartEpoch: 'boot-2', restarts: 7 })).toBe(false);
    expect(crashedInWindow(opened, { restartEpoch: BOOT, restarts: null })).toBe(false);
    // A reboot, a manual start or reset-failed: the count is taken again, never read as a crash.
    expect(needsRestartBaseline(opened, { restartEpoch: 'boot-2', restarts: 0 })).toBe(true);
    expect(needsRestartBaseline(opened, { restartEpoch: BOOT, restarts: 0 })).toBe(true);
    expect(needsRestartBaseline(opened, { restartEpoch: BOOT, restarts: 2 })).toBe(false);
    expect(withRestartBaseline(opened, 'boot-2', 0)).toMatchObject({ restartEpoch: 'boot-2', restartsAtStart: 0 });
  });
});

describe('the startup gate with a watch window (docs/protocol.md#watch-window)', () => {
  it('opens the window once the candidate passed its gate, reports it, then watches slice by slice', () => {
    expect(decideStartup(proven(null))).toEqual({
      kind: 'start-watch',
      rule: 'S4',
      slot: 'green',
      digest: DIGEST,
      windowMs: TEN_MINUTES_MS,
    });
    expect(decideStartup(proven(window()))).toEqual({ kind: 'report-watching', rule: 'S4' });
    expect(decideStartup(proven(window(), {}, { watchReported: true }))).toEqual({
      kind: 'watch',
      rule: 'S4',
      slot: 'green',
      sliceMs: 60_000,
    });
  });

  it('goes on to the completion only once the whole window was watched', () => {
    const done = withWatched(window(), TEN_MINUTES_MS);
    expect(decideStartup(proven(done, {}, { watchReported: true }))).toMatchObject({ kind: 'sync-container' });
    // No window configured and none on disk: today's behaviour.
    expect(decideStartup({ ...proven(null), watchMs: 0 })).toMatchObject({ kind: 'sync-container' });
  });

  it('fails the candidate that crashed inside its window before measuring it again', () => {
    const crashed = proven(window(), { candidateHealth: 'unknown', restarts: { restartEpoch: BOOT, restarts: 3 } });
    expect(decideStartup(crashed)).toEqual({
      kind: 'record-failure',
      rule: 'S5',
      failure: POLICY_FAILURES.crashedInWindow,
      recoveryRequired: true,
    });
  });

  it('fails a candidate found unhealthy inside its window with the window named', () => {
    expect(decideStartup(proven(window(), { candidateHealth: 'unhealthy' }))).toMatchObject({
      kind: 'record-failure',
      failure: POLICY_FAILURES.unhealthyInWindow,
    });
    expect(decideStartup(proven(null, { candidateHealth: 'unhealthy' }))).toMatchObject({
      failure: POLICY_FAILURES.unhealthy,
    });
  });

  it('takes the restart count again after a reboot rather than reading it as a crash', () => {
    const rebooted = proven(window(), { restarts: { restartEpoch: 'boot-2', restarts: 0 } });
    expect(decideStartup(rebooted)).toEqual({ kind: 'rebase-watch', rule: 'S4' });
  });

  it("ignores another candidate's or the direct path's window and opens its own", () => {
    expect(decideStartup(proven(window({ owner: 'direct' })))).toMatchObject({ kind: 'start-watch' });
    expect(decideStartup(proven(window({ candidate: 'blue' })))).toMatchObject({ kind: 'start-watch' });
  });

  it('removes the window before the record, on Complete and on Failed, and a window left alone at S1', () => {
    const done = withWatched(window(), TEN_MINUTES_MS);
    const completed = { ...proven(done, {}, { published: true }), record: withCompleted(switched) };
    expect(decideStartup(completed)).toEqual({ kind: 'delete-watch', rule: 'S4' });
    expect(decideStartup({ ...completed, watch: null })).toEqual({ kind: 'delete-record', rule: 'S4' });
    const failed = {
      ...start(recovering, { current: 'blue', lastGood: 'blue', container: 'equal', quarantined: true }),
      progress: { published: true, containerCopiedFrom: null, restartedInto: null, watchReported: false },
      watch: window(),
      watchMs: TEN_MINUTES_MS,
    };
    expect(decideStartup(failed)).toEqual({ kind: 'delete-watch', rule: 'S8' });
    expect(decideStartup({ ...failed, record: null })).toEqual({ kind: 'delete-watch', rule: 'S1' });
    expect(decideStartup({ ...failed, record: null, watch: window({ owner: 'direct' }) })).toEqual({
      kind: 'open-gate',
      rule: 'S1',
    });
  });

  it('never watches a candidate that did not pass the gate', () => {
    const unproven = { ...proven(window(), { candidateHealth: 'unknown' }), instanceId: SELF };
    expect(decideStartup(unproven)).toMatchObject({ kind: 'measure-health' });
  });
});
