/**
 * The rollout use cases over a MemoryRolloutStore, and the transition table they decide by: the
 * CEL rules of deploy/agentrollout-crd.yaml applied before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import { MemoryRolloutStore } from '../../../src/adapters/fleet/memory/memory-rollout-store.js';
import { ROLLOUT_STATES } from '../../../src/domain/fleet/spec/rollout-spec.js';
import { MAX_WRITE_ATTEMPTS, RolloutControl } from '../../../src/app/fleet/rollout/rollout-control.js';
import { decideTransition, ROLLOUT_ACTIONS, TARGET_STATE } from '../../../src/app/fleet/rollout/rollout-transition.js';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import type { RolloutObject } from '../../../src/ports/fleet/rollout-store.js';

const SPEC = {
  releaseRef: { name: 'r2' },
  targets: { selector: {} },
  strategy: { waves: [{ name: 'all', percent: 100 }] },
  rollback: { releaseRef: { name: 'r1' } },
};
const object = (spec: Record<string, unknown>, status: unknown = null): RolloutObject => ({
  name: 'fleet',
  resourceVersion: '7',
  generation: 1,
  annotations: {},
  createdAt: null,
  spec: { ...SPEC, ...spec },
  status,
});
const halted = (id: string) => ({ phase: 'Halted', halt: { id, reason: 'FailureBudgetExceeded', wave: 'all' } });

/** What the CRD's CEL rules allow as spec.state changes (no command ever targets Preview). */
function celAllows(from: string, to: string, hasRollback: boolean): boolean {
  if (to === 'Preview' && from !== 'Preview') return false;
  if (from === 'RollBack' && to !== 'RollBack' && to !== 'Abort') return false;
  if (from === 'Abort' && to !== 'Abort' && to !== 'RollBack') return false;
  return to !== 'RollBack' || hasRollback;
}

describe('decideTransition', () => {
  const cases = ROLLOUT_STATES.flatMap((from) =>
    ROLLOUT_ACTIONS.flatMap((action) => [true, false].map((hasRollback) => [from, action, hasRollback] as const)),
  );

  it.each(cases)('from %s, %s (rollback release: %s) agrees with the CEL rules', (from, action, hasRollback) => {
    const to = TARGET_STATE[action];
    const decided = decideTransition(action, object({ state: from, ...(hasRollback ? {} : { rollback: undefined }) }));
    if (from === to) expect(decided).toEqual({ kind: 'unchanged' });
    else if (celAllows(from, to, hasRollback)) expect(decided).toEqual({ kind: 'patch', patch: { state: to } });
    else {
      const code = to === 'RollBack' && !hasRollback && from !== 'RollBack' && celAllows(from, to, true);
      expect(decided).toMatchObject({
        kind: 'refused',
        failure: { code: code ? 'E_NO_ROLLBACK_RELEASE' : 'E_TRANSITION_REFUSED' },
      });
    }
  });

  it('a spec without state is Preview (the CRD default)', () => {
    expect(decideTransition('resume', object({ state: undefined }))).toEqual({
      kind: 'patch',
      patch: { state: 'Run' },
    });
  });

  it('an unknown state is refused, whatever the command', () => {
    for (const action of ROLLOUT_ACTIONS)
      expect(decideTransition(action, object({ state: 'Sideways' }))).toMatchObject({
        failure: { code: 'E_TRANSITION_REFUSED' },
      });
  });

  it('resume names the halt only while the phase is Halted and the spec does not name it yet', () => {
    expect(decideTransition('resume', object({ state: 'Run' }, halted('h-1')))).toEqual({
      kind: 'patch',
      patch: { resumeFromHalt: 'h-1' },
    });
    expect(decideTransition('resume', object({ state: 'Run', resumeFromHalt: 'h-1' }, halted('h-1')))).toEqual({
      kind: 'unchanged',
    });
    expect(decideTransition('resume', object({ state: 'Run', resumeFromHalt: 'h-0' }, halted('h-1')))).toEqual({
      kind: 'patch',
      patch: { resumeFromHalt: 'h-1' },
    });
    const paused = { phase: 'Paused', halt: halted('h-1').halt };
    expect(decideTransition('resume', object({ state: 'Pause' }, paused))).toEqual({
      kind: 'patch',
      patch: { state: 'Run' },
    });
    expect(decideTransition('pause', object({ state: 'Run' }, halted('h-1')))).toEqual({
      kind: 'patch',
      patch: { state: 'Pause' },
    });
  });

  it('a halted rollout that is aborted is not resumed (refused, not half-applied)', () => {
    expect(decideTransition('resume', object({ state: 'Abort' }, halted('h-1')))).toMatchObject({ kind: 'refused' });
  });
});

describe('RolloutControl', () => {
  const control = (store: MemoryRolloutStore) =>
    new RolloutControl({ openStore: async () => store, clock: new MemoryClock() });

  it('status returns the view as read and closes the store', async () => {
    const store = new MemoryRolloutStore([{ name: 'fleet', spec: SPEC, status: halted('h-1') }]);
    const view = await control(store).status('fleet');
    expect(view).toMatchObject({
      ok: true,
      value: { name: 'fleet', release: 'r2', state: 'Preview', phase: 'Halted', status: halted('h-1') },
    });
    expect(store.closed).toBe(1);
  });

  it('a change retries conflicts on a fresh read, at most MAX_WRITE_ATTEMPTS reads', async () => {
    const store = new MemoryRolloutStore([{ name: 'fleet', spec: SPEC }]);
    store.interfere(MAX_WRITE_ATTEMPTS - 1);
    expect(await control(store).change('fleet', 'pause')).toMatchObject({
      ok: true,
      value: { changed: true, attempts: MAX_WRITE_ATTEMPTS, to: { state: 'Pause' } },
    });
    const again = new MemoryRolloutStore([{ name: 'fleet', spec: SPEC }]);
    again.interfere(MAX_WRITE_ATTEMPTS);
    expect(await control(again).change('fleet', 'pause')).toMatchObject({ ok: false, failure: { code: 'E_CLUSTER' } });
    expect(again.reads).toBe(MAX_WRITE_ATTEMPTS);
    expect(again.patches).toEqual([]);
    expect(again.closed).toBe(1);
  });

  it.each([[''], ['Fleet'], ['a/b'], ['-a'], ['a'.repeat(254)], ['a\nb']])(
    'a name %j that is no object name is E_USAGE and the store is never opened',
    async (name) => {
      let opened = 0;
      const refused = await new RolloutControl({
        clock: new MemoryClock(),
        openStore: async () => {
          opened += 1;
          return new MemoryRolloutStore();
        },
      }).status(name);
      expect(refused).toMatchObject({ ok: false, failure: { code: 'E_USAGE' } });
      expect(opened).toBe(0);
    },
  );
});
