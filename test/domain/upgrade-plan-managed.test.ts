import { describe, expect, it } from 'vitest';
import {
  describeStep,
  lastGoodSteps,
  planSlotChange,
  type ActivationStep,
  type ActivationStepKind,
} from '../../src/domain/node/activation/activation-steps.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  planActivation,
  planManagedStaging,
  planManagedSwitch,
  type ManagedPlan,
  type ManagedSwitchInput,
} from '../../src/domain/node/activation/upgrade-plan.js';
import { DIGEST_A, DIGEST_B, flexLayout, TEXT, unwrap } from './layout-fixtures.js';
import { factsOf, file, link, type HostSpec } from './layout-host-model.js';

const ROOTS = ['/', '/sb'] as const;

const entryLink = link(TEXT.entryToCurrent);
const slotText = (slot: SlotName): string => (slot === 'blue' ? TEXT.blue : TEXT.green);
const managedOn = (current: SlotName, lastGood: HostSpec['lastGood']): HostSpec => ({
  entry: entryLink,
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(slotText(current)),
  lastGood,
});

// ---- steps
const protect = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'protect' });
const repair = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'repair' });
const install = (slot: SlotName): ActivationStep => ({ kind: 'install-candidate', slot });
const sw = (slot: SlotName): ActivationStep => ({ kind: 'switch-current', slot });
const recordDigest: ActivationStep = { kind: 'record-digest' };
const discard: ActivationStep = { kind: 'discard-staging' };
const commit: ActivationStep = { kind: 'commit-switch' };
const completion: ActivationStep = { kind: 'record-completion' };
const sync = (slot: SlotName): ActivationStep => ({ kind: 'sync-container', slot });

function switchInput(spec: HostSpec, previous: SlotName, overrides: Partial<ManagedSwitchInput> = {}) {
  return (root: string): ManagedSwitchInput => ({
    facts: factsOf(flexLayout(root), spec),
    previous,
    candidateDigest: DIGEST_B,
    activeDigest: DIGEST_A,
    containerDiffers: false,
    ...overrides,
  });
}

const plan = (
  active: SlotName,
  target: SlotName,
  candidateChanged: boolean,
  steps: readonly ActivationStep[],
): ManagedPlan => ({ activeSlot: active, targetSlot: target, rollbackSlot: active, candidateChanged, steps });

describe('planManagedStaging (rows 5–6, up to the verified candidate)', () => {
  it.each(ROOTS)('root %s: the inactive slot is the candidate; record it, download, verify', (root) => {
    for (const current of ['blue', 'green'] as const) {
      const other = current === 'blue' ? 'green' : 'blue';
      expect(unwrap(planManagedStaging(factsOf(flexLayout(root), managedOn(current, link(slotText(other))))))).toEqual(
        plan(current, other, true, [
          { kind: 'record-candidate', candidate: other, previous: current },
          { kind: 'download-candidate' },
          { kind: 'verify-candidate' },
        ]),
      );
    }
  });

  it.each([
    ['a legacy host (migration did not run)', { entry: file('legacy') }],
    ['a dangling current', { ...managedOn('blue', link(TEXT.blue)), current: link('aks-flex-node-gone') }],
  ] as const)('%s → E_LAYOUT', (_label, spec: HostSpec) => {
    const result = planManagedStaging(factsOf(flexLayout(), spec));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });
});

describe('planManagedSwitch (rows 6–7, once the candidate is verified)', () => {
  it.each(
    ROOTS.flatMap((root) =>
      (
        [
          [
            'last-good on the running slot: install, record the digest, switch, commit',
            switchInput(managedOn('blue', link(TEXT.blue)), 'blue'),
            plan('blue', 'green', true, [install('green'), recordDigest, discard, sw('green'), commit]),
          ],
          [
            'last-good on the slot about to be written: protect BEFORE install',
            switchInput(managedOn('blue', link(TEXT.green)), 'blue'),
            plan('blue', 'green', true, [
              protect('blue'),
              install('green'),
              recordDigest,
              discard,
              sw('green'),
              commit,
            ]),
          ],
          [
            'last-good names no slot: repair BEFORE install',
            switchInput(managedOn('green', link('aks-flex-node-gone')), 'green'),
            plan('green', 'blue', true, [repair('green'), install('blue'), recordDigest, discard, sw('blue'), commit]),
          ],
          [
            'identical candidate: no install, no switch; Complete is recorded',
            switchInput(managedOn('blue', link(TEXT.green)), 'blue', { candidateDigest: DIGEST_A }),
            plan('blue', 'blue', false, [discard, completion]),
          ],
          [
            'identical candidate, the container copy differs: it is made equal before Complete',
            switchInput(managedOn('green', link(TEXT.blue)), 'green', {
              candidateDigest: DIGEST_A,
              containerDiffers: true,
            }),
            plan('green', 'green', false, [discard, sync('green'), completion]),
          ],
        ] as const
      ).map(([label, input, expected]) => [root, label, input, expected] as const),
    ),
  )('root %s: %s', (root, _label, input, expected) => {
    expect(unwrap(planManagedSwitch(input(root)))).toEqual(expected);
  });

  it('refuses when current no longer names the slot the upgrade started from (E_LAYOUT)', () => {
    const result = planManagedSwitch(switchInput(managedOn('green', link(TEXT.green)), 'blue')('/'));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });

  it('writes the record after the install and after the switch, and the candidate slot is never the running one', () => {
    for (const lastGood of [link(TEXT.blue), link(TEXT.green), null]) {
      const result = unwrap(planManagedSwitch(switchInput(managedOn('blue', lastGood), 'blue')('/')));
      const kinds = result.steps.map((step) => step.kind);
      expect(kinds.indexOf('record-digest')).toBe(kinds.indexOf('install-candidate') + 1);
      expect(kinds.indexOf('commit-switch')).toBe(kinds.indexOf('switch-current') + 1);
      expect(kinds.indexOf('discard-staging')).toBeLessThan(kinds.indexOf('switch-current'));
      expect(result.targetSlot).not.toBe(result.activeSlot);
    }
  });
});

describe('one slot change for both paths', () => {
  const HOSTS: readonly (readonly [string, HostSpec])[] = [
    ['on blue, last-good blue', managedOn('blue', link(TEXT.blue))],
    ['on blue, last-good green', managedOn('blue', link(TEXT.green))],
    ['on green, last-good blue', managedOn('green', link(TEXT.blue))],
    ['on green, last-good dangling', managedOn('green', link('aks-flex-node-gone'))],
    ['on blue, last-good missing', managedOn('blue', null)],
  ];

  /** The last-good, install and switch steps of a plan, in order: the slot change itself. */
  const slotChangeOf = (steps: readonly ActivationStep[]): ActivationStep[] =>
    steps.filter((step) => ['point-last-good', 'install-candidate', 'switch-current'].includes(step.kind));

  it.each(ROOTS.flatMap((root) => HOSTS.map(([label, spec]) => [root, label, spec] as const)))(
    'root %s, %s: the direct and the managed plan make the same slot change',
    (root, _label, spec) => {
      const layout = flexLayout(root);
      const facts = factsOf(layout, spec);
      const direct = unwrap(
        planActivation({
          layout,
          facts,
          candidateDigest: DIGEST_B,
          activeDigest: DIGEST_A,
          serviceAssetsCurrent: true,
          serviceActive: true,
          containerPresent: false,
          watchMs: 0,
        }),
      );
      const staging = unwrap(planManagedStaging(facts));
      const managed = unwrap(
        planManagedSwitch({
          facts,
          previous: staging.activeSlot,
          candidateDigest: DIGEST_B,
          activeDigest: DIGEST_A,
          containerDiffers: true,
        }),
      );
      expect(slotChangeOf(managed.steps)).toEqual(slotChangeOf(direct.steps));
      expect([managed.activeSlot, managed.targetSlot, managed.rollbackSlot]).toEqual([
        direct.activeSlot,
        direct.targetSlot,
        direct.rollbackSlot,
      ]);
    },
  );

  it.each(ROOTS.flatMap((root) => HOSTS.map(([label, spec]) => [root, label, spec] as const)))(
    'root %s, %s: an identical candidate is installed and switched by neither path',
    (root, _label, spec) => {
      const layout = flexLayout(root);
      const facts = factsOf(layout, spec);
      const input = {
        layout,
        facts,
        candidateDigest: DIGEST_A,
        activeDigest: DIGEST_A,
        serviceAssetsCurrent: true,
        serviceActive: false,
        containerPresent: true,
        watchMs: 0,
      };
      const direct = unwrap(planActivation(input));
      const managed = unwrap(planManagedSwitch({ ...input, previous: direct.activeSlot, containerDiffers: true }));
      for (const result of [direct, managed]) {
        expect(result.candidateChanged).toBe(false);
        expect(result.targetSlot).toBe(result.activeSlot);
        expect(result.steps.map((step) => step.kind)).not.toContain('install-candidate');
        expect(result.steps.map((step) => step.kind)).not.toContain('switch-current');
      }
    },
  );

  it.each([
    ['last-good names the target: protect it first', 'green', [protect('blue')]],
    ['last-good names the running slot: nothing to do', 'blue', []],
    ['last-good names no slot: repair it', null, [repair('blue')]],
  ] as const)('%s', (_label, lastGood, expected) => {
    expect(lastGoodSteps({ active: 'blue', target: 'green', lastGood })).toEqual(expected);
  });

  it('an identical candidate (target = active) never needs protecting', () => {
    expect(lastGoodSteps({ active: 'blue', target: 'blue', lastGood: 'blue' })).toEqual([]);
  });

  it('places each path’s notes around the install and the switch, after last-good is safe', () => {
    const mark: ActivationStep = { kind: 'mark-activation', previous: 'blue', candidate: 'green' };
    expect(
      planSlotChange(
        { active: 'blue', target: 'green', lastGood: 'green' },
        { beforeInstall: [mark], afterInstall: [recordDigest], afterSwitch: [commit] },
      ),
    ).toEqual([protect('blue'), mark, install('green'), recordDigest, sw('green'), commit]);
  });
});

describe('describeStep: the managed steps', () => {
  const layout = flexLayout('/sb');
  const MANAGED_STEPS: readonly ActivationStep[] = [
    { kind: 'record-candidate', candidate: 'green', previous: 'blue' },
    { kind: 'download-candidate' },
    recordDigest,
    discard,
    commit,
    completion,
  ];
  it.each(MANAGED_STEPS.map((step) => [step.kind, step] as const))('%s has a description', (_kind, step) => {
    expect(describeStep(layout, step).trim()).not.toBe('');
  });

  it('covers the kinds the managed path adds', () => {
    const added: readonly ActivationStepKind[] = [
      'record-candidate',
      'download-candidate',
      'record-digest',
      'discard-staging',
      'commit-switch',
      'record-completion',
    ];
    expect(new Set(MANAGED_STEPS.map((step) => step.kind))).toEqual(new Set(added));
  });
});
