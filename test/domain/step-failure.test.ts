import { describe, expect, it } from 'vitest';
import type { ActivationStep } from '../../src/domain/node/activation/activation-steps.js';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  decideStepFailure,
  type StepFailureDecision,
  type StepPlan,
} from '../../src/domain/node/activation/step-failure.js';
import {
  planActivation,
  planManagedStaging,
  planManagedSwitch,
} from '../../src/domain/node/activation/upgrade-plan.js';
import { DIGEST_A, DIGEST_B, flexLayout, TEXT, unwrap } from './layout-fixtures.js';
import { factsOf, file, link, type HostSpec } from './layout-host-model.js';

const V: ActivationStep = { kind: 'verify-candidate' };
const mark: ActivationStep = { kind: 'mark-activation', previous: 'blue', candidate: 'green' };
const install: ActivationStep = { kind: 'install-candidate', slot: 'green' };
const sw: ActivationStep = { kind: 'switch-current', slot: 'green' };
const assets: ActivationStep = { kind: 'update-service-assets' };
const restart: ActivationStep = { kind: 'restart-service' };
const wait = (slot: SlotName): ActivationStep => ({ kind: 'wait-healthy', slot });
const sync = (slot: SlotName): ActivationStep => ({ kind: 'sync-container', slot });

const PROPAGATE: StepFailureDecision = { kind: 'propagate' };
const restoreTo = (to: SlotName): StepFailureDecision => ({ kind: 'restore-current', to });
const rollBackTo = (to: SlotName, quarantine = true): StepFailureDecision => ({ kind: 'roll-back', to, quarantine });

const DIRECT: StepPlan = {
  steps: [V, mark, install, sw, assets, restart, wait('green'), sync('green')],
  targetSlot: 'green',
  rollbackSlot: 'blue',
};
const MANAGED: StepPlan = {
  steps: [
    { kind: 'point-last-good', slot: 'blue', why: 'protect' },
    install,
    { kind: 'record-digest' },
    { kind: 'discard-staging' },
    sw,
    { kind: 'commit-switch' },
  ],
  targetSlot: 'green',
  rollbackSlot: 'blue',
};

const decide = (plan: StepPlan, at: number, started = true, code: ErrorCode = 'E_IO') =>
  decideStepFailure(plan, { at, started, code });

describe('decideStepFailure: the table', () => {
  it.each([
    ['verify-candidate', 0, PROPAGATE],
    ['mark-activation', 1, PROPAGATE],
    ['install-candidate', 2, PROPAGATE],
    ['switch-current (the link may have moved)', 3, restoreTo('blue')],
    ['update-service-assets after the switch', 4, rollBackTo('blue')],
    ['restart-service', 5, rollBackTo('blue')],
    ['wait-healthy', 6, rollBackTo('blue')],
    ['sync-container', 7, rollBackTo('blue')],
  ] as const)('direct, changed candidate, %s fails → %j', (_label, at, expected) => {
    expect(decide(DIRECT, at)).toEqual(expected);
  });

  it.each([
    ['before the switch', 3, PROPAGATE],
    ['before the restart', 5, rollBackTo('blue', false)],
    ['before the health wait', 6, rollBackTo('blue', false)],
  ] as const)('direct: a signal %s → %j (never quarantined)', (_label, at, expected) => {
    expect(decide(DIRECT, at, false, 'E_INTERRUPTED')).toEqual(expected);
  });

  it('direct: a health wait a signal ended rolls back without quarantine', () => {
    expect(decide(DIRECT, 6, true, 'E_INTERRUPTED')).toEqual(rollBackTo('blue', false));
  });

  it.each([
    ['point-last-good (protect)', 0, PROPAGATE],
    ['install-candidate', 1, PROPAGATE],
    ['record-digest', 2, PROPAGATE],
    ['discard-staging', 3, PROPAGATE],
    ['switch-current', 4, restoreTo('blue')],
    ['commit-switch', 5, restoreTo('blue')],
  ] as const)('managed, %s fails → %j', (_label, at, expected) => {
    expect(decide(MANAGED, at)).toEqual(expected);
  });

  it.each([
    ['restart-service', 1, rollBackTo('green')],
    ['wait-healthy', 2, rollBackTo('green')],
    ['sync-container', 3, rollBackTo('green')],
  ] as const)('direct, identical candidate, last-good elsewhere: %s fails → %j', (_label, at, expected) => {
    const plan: StepPlan = {
      steps: [V, restart, wait('blue'), sync('blue')],
      targetSlot: 'blue',
      rollbackSlot: 'green',
    };
    expect(decide(plan, at)).toEqual(expected);
  });

  it('direct, identical candidate: a failed update of the service assets propagates (nothing ran)', () => {
    const plan: StepPlan = { steps: [V, assets, restart, wait('blue')], targetSlot: 'blue', rollbackSlot: 'green' };
    expect(decide(plan, 1)).toEqual(PROPAGATE);
  });

  it('nowhere else to go (the rollback slot is the target): every failure propagates', () => {
    const plan: StepPlan = {
      steps: [V, restart, wait('blue'), sync('blue')],
      targetSlot: 'blue',
      rollbackSlot: 'blue',
    };
    for (const at of plan.steps.keys()) expect(decide(plan, at)).toEqual(PROPAGATE);
  });

  it('a step outside the plan is a programming error', () => {
    expect(() => decide(DIRECT, DIRECT.steps.length)).toThrow(InvariantViolation);
  });
});

// ---------------------------------------------------------------------------------------------
// Every plan both paths make, every step, started or not, every kind of cause.

const managedOn = (current: SlotName, lastGood: HostSpec['lastGood']): HostSpec => ({
  entry: link(TEXT.entryToCurrent),
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(current === 'blue' ? TEXT.blue : TEXT.green),
  lastGood,
});
const HOSTS: readonly HostSpec[] = [
  { entry: file('legacy') },
  managedOn('blue', link(TEXT.blue)),
  managedOn('blue', link(TEXT.green)),
  managedOn('green', link(TEXT.blue)),
  managedOn('green', null),
];

function allPlans(): { readonly label: string; readonly plan: StepPlan; readonly changed: boolean }[] {
  const layout = flexLayout();
  const plans: { label: string; plan: StepPlan; changed: boolean }[] = [];
  for (const [index, spec] of HOSTS.entries()) {
    const facts = factsOf(layout, spec);
    for (const candidateDigest of [DIGEST_A, DIGEST_B])
      for (const serviceActive of [true, false])
        for (const containerPresent of [true, false]) {
          const input = { layout, facts, candidateDigest, activeDigest: DIGEST_A, containerPresent, watchMs: 0 };
          const direct = unwrap(planActivation({ ...input, serviceAssetsCurrent: !serviceActive, serviceActive }));
          const label = `host ${index}, ${candidateDigest === DIGEST_A ? 'identical' : 'changed'}`;
          plans.push({ label: `direct ${label}`, plan: direct, changed: direct.candidateChanged });
          if (index === 0) continue; // the managed path plans on a migrated layout only
          const staging = unwrap(planManagedStaging(facts));
          const managed = unwrap(
            planManagedSwitch({ ...input, previous: staging.activeSlot, containerDiffers: containerPresent }),
          );
          plans.push({ label: `managed staging, host ${index}`, plan: staging, changed: true });
          plans.push({ label: `managed ${label}`, plan: managed, changed: managed.candidateChanged });
        }
  }
  return plans;
}

describe('decideStepFailure: the safety of every decision', () => {
  const CODES: readonly ErrorCode[] = ['E_IO', 'E_UNHEALTHY', 'E_INTERRUPTED'];

  it.each(allPlans().map(({ label, plan, changed }) => [label, plan, changed] as const))(
    '%s',
    (_label, plan, changed) => {
      const switchAt = plan.steps.findIndex((step) => step.kind === 'switch-current');
      for (const at of plan.steps.keys())
        for (const started of [true, false])
          for (const code of CODES) {
            const decision = decideStepFailure(plan, { at, started, code });
            const context = `${plan.steps[at]?.kind ?? ''} at ${at}, started ${String(started)}, ${code}`;
            // Going back always goes to the rollback slot, never to the slot just written.
            if (decision.kind !== 'propagate') {
              expect(decision.to, context).toBe(plan.rollbackSlot);
              expect(decision.to, context).not.toBe(plan.targetSlot);
            }
            // A signal is never the candidate's fault.
            if (decision.kind === 'roll-back') expect(decision.quarantine, context).toBe(code !== 'E_INTERRUPTED');
            // Once the switch may have landed, a changed candidate is never left current.
            const switching = switchAt >= 0 && (at > switchAt || (at === switchAt && started));
            if (changed && switching) expect(decision.kind, context).not.toBe('propagate');
            // Before the switch of a changed candidate, nothing is undone: nothing runs it yet.
            if (changed && (switchAt < 0 || at < switchAt || (at === switchAt && !started)))
              expect(decision, context).toEqual(PROPAGATE);
          }
    },
  );
});
