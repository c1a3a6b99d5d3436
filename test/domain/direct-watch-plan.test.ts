import { describe, expect, it } from 'vitest';
import {
  decideInterruptedActivation,
  newActivationMarker,
  type MarkerObservation,
} from '../../src/domain/node/activation/activation-marker.js';
import { decideStepFailure } from '../../src/domain/node/activation/step-failure.js';
import { planActivation } from '../../src/domain/node/activation/upgrade-plan.js';
import { DIGEST_B, flexLayout, unwrap } from './layout-fixtures.js';
import { buildHost } from './layout-host-model.js';
import { CHANGED, IDENTICAL, inputFor, lgBlue, managedOn } from './upgrade-plan-fixtures.js';

const WINDOW_MS = 600_000;

function planWith(options: typeof CHANGED, watchMs: number) {
  const layout = flexLayout();
  return unwrap(
    planActivation({ ...inputFor(layout, buildHost(layout, managedOn('blue', lgBlue)), options), watchMs }),
  );
}

describe('the direct plan with a watch window (docs/protocol.md#watch-window)', () => {
  it('watches a changed candidate after its gate, and fails that step as it fails the gate', () => {
    const plan = planWith(CHANGED, WINDOW_MS);
    const kinds = plan.steps.map((step) => step.kind);
    expect(kinds.slice(kinds.indexOf('wait-healthy'))).toEqual(['wait-healthy', 'watch-candidate']);
    expect(plan.steps.at(-1)).toEqual({ kind: 'watch-candidate', slot: 'green', windowMs: WINDOW_MS });
    const at = kinds.indexOf('watch-candidate');
    expect(decideStepFailure(plan, { at, started: true, code: 'E_UNHEALTHY' })).toEqual({
      kind: 'roll-back',
      to: 'blue',
      quarantine: true,
    });
    expect(decideStepFailure(plan, { at, started: true, code: 'E_INTERRUPTED' })).toMatchObject({ quarantine: false });
  });

  it('puts no window on an identical candidate, a stopped agent or a zero window', () => {
    for (const plan of [
      planWith(IDENTICAL, WINDOW_MS),
      planWith({ ...CHANGED, serviceActive: false }, WINDOW_MS),
      planWith(CHANGED, 0),
    ])
      expect(plan.steps.map((step) => step.kind)).not.toContain('watch-candidate');
  });
});

describe('an interrupted activation with a watch window', () => {
  const marker = newActivationMarker({
    previous: 'blue',
    candidate: 'green',
    candidateDigest: DIGEST_B,
    candidateVersion: '2.0.0',
    serviceActive: true,
  });
  const seen = (observed: Partial<MarkerObservation>): MarkerObservation => ({
    current: 'green',
    candidateSlotDigest: DIGEST_B,
    health: 'unknown',
    window: 'none',
    ...observed,
  });

  it('watches the rest of an open window once the gate passed, and commits only then', () => {
    expect(decideInterruptedActivation(marker, seen({ window: 'open' }))).toEqual({
      kind: 'measure-health',
      slot: 'green',
    });
    expect(decideInterruptedActivation(marker, seen({ window: 'open', health: 'healthy' }))).toEqual({
      kind: 'resume-watch',
      slot: 'green',
    });
    expect(decideInterruptedActivation(marker, seen({ window: 'over', health: 'healthy' }))).toEqual({
      kind: 'commit',
      slot: 'green',
    });
  });

  it('rolls back and quarantines a candidate that crashed inside its window, without measuring it', () => {
    expect(decideInterruptedActivation(marker, seen({ window: 'crashed' }))).toEqual({
      kind: 'roll-back',
      to: 'blue',
      quarantine: true,
    });
  });
});
