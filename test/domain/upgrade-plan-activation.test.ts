import { describe, expect, it } from 'vitest';
import {
  describeStep,
  planActivation,
  planRollback,
  type ActivationStep,
} from '../../src/domain/node/activation/upgrade-plan.js';
import { flexLayout, TEXT, unwrap } from './layout-fixtures.js';
import { buildHost, file, link, observe, type HostSpec } from './layout-host-model.js';
import { LEGACY_CASES } from './upgrade-plan-cases-legacy.js';
import { MANAGED_CASES } from './upgrade-plan-cases-managed.js';
import {
  assets,
  CHANGED,
  entryLink,
  init,
  inputFor,
  install,
  legacy,
  lgBlue,
  lgDangling,
  lgGreen,
  mark,
  migrationActions,
  protect,
  repair,
  restart,
  rows,
  sw,
  sync,
  V,
  wait,
} from './upgrade-plan-fixtures.js';

const CASES = [...LEGACY_CASES, ...MANAGED_CASES];

describe('planActivation', () => {
  it.each(rows(CASES))('root %s: %s', (root, _label, spec, options, expected) => {
    const layout = flexLayout(root);
    const hostSpec = spec(layout);
    const result = unwrap(planActivation(inputFor(layout, buildHost(layout, hostSpec), options)));
    expect(result).toEqual(expected(layout, hostSpec));
  });

  it('the legacy initialisation carries the full migration, in order', () => {
    const layout = flexLayout();
    const result = unwrap(planActivation(inputFor(layout, buildHost(layout, legacy), CHANGED)));
    const initStep = result.steps[1];
    expect(initStep?.kind).toBe('initialize-layout');
    if (initStep?.kind !== 'initialize-layout') return;
    expect(
      initStep.actions.map((action) => (action.kind === 'point-link' ? `${action.kind}:${action.role}` : action.kind)),
    ).toEqual(['create-slot-directory', 'seed-slot', 'point-link:current', 'point-link:lastGood', 'point-link:entry']);
  });

  it.each(
    rows([
      ['nothing runnable', {}],
      ['non-executable legacy file', { entry: file('legacy', false) }],
      ['dangling current, nothing runnable, entry → current', { entry: entryLink, current: link(TEXT.blue) }],
    ] as const),
  )('root %s: %s → E_LAYOUT', (root, _label, spec: HostSpec) => {
    const layout = flexLayout(root);
    const result = planActivation(inputFor(layout, buildHost(layout, spec), CHANGED));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });
});

describe('describeStep', () => {
  const layout = flexLayout('/sb');
  const steps: ActivationStep[] = [
    V,
    init([]),
    init(migrationActions(layout, legacy)),
    ...(['blue', 'green'] as const).flatMap((slot) => [
      protect(slot),
      repair(slot),
      install(slot),
      sw(slot),
      wait(slot),
      sync(slot),
    ]),
    mark('blue', 'green'),
    assets,
    restart,
  ];
  it.each(steps.map((step) => [JSON.stringify(step).slice(0, 80), step] as const))(
    '%s has a description',
    (_label, step) => {
      const text = describeStep(layout, step);
      expect(typeof text).toBe('string');
      expect(text.trim()).not.toBe('');
    },
  );

  it('covers every step kind', () => {
    expect(new Set(steps.map((step) => step.kind))).toEqual(
      new Set([
        'verify-candidate',
        'initialize-layout',
        'point-last-good',
        'mark-activation',
        'install-candidate',
        'switch-current',
        'update-service-assets',
        'restart-service',
        'wait-healthy',
        'sync-container',
      ]),
    );
  });
});

describe('planRollback', () => {
  const layout = flexLayout();
  const managedWith = (
    current: HostSpec['current'],
    lastGood: HostSpec['lastGood'],
    extra: HostSpec = {},
  ): HostSpec => ({
    entry: entryLink,
    blue: file('blue-bin'),
    green: file('green-bin'),
    current,
    lastGood,
    ...extra,
  });

  it.each([
    ['current blue, last-good green', managedWith(link(TEXT.blue), lgGreen), { from: 'blue', to: 'green' }],
    ['current green, last-good blue', managedWith(link(TEXT.green), lgBlue), { from: 'green', to: 'blue' }],
    ['current blue, last-good blue', managedWith(link(TEXT.blue), lgBlue), { from: 'blue', to: 'blue' }],
    ['current green, last-good green', managedWith(link(TEXT.green), lgGreen), { from: 'green', to: 'green' }],
    ['absolute link texts', managedWith(link(layout.green), link(layout.blue)), { from: 'green', to: 'blue' }],
  ] as const)('%s → %j', (_label, spec: HostSpec, expected) => {
    expect(planRollback(observe(layout, buildHost(layout, spec)))).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['current missing', managedWith(null, lgGreen)],
    ['current dangling', managedWith(link('aks-flex-node-gone'), lgGreen)],
    [
      'current resolves outside the slots',
      managedWith(link('/opt/agent'), lgGreen, { extra: { '/opt/agent': file('x') } }),
    ],
    ['current resolves to a directory', managedWith(link('.'), lgGreen)],
    ['last-good missing', managedWith(link(TEXT.blue), null)],
    ['last-good dangling', managedWith(link(TEXT.blue), lgDangling)],
    ['last-good names a missing slot', managedWith(link(TEXT.blue), lgGreen, { green: null })],
    [
      'last-good resolves to a non-executable slot',
      managedWith(link(TEXT.blue), lgGreen, { green: file('green-bin', false) }),
    ],
    [
      'last-good resolves outside the slots',
      managedWith(link(TEXT.blue), link('/opt/agent'), { extra: { '/opt/agent': file('x') } }),
    ],
    ['both missing', managedWith(null, null)],
  ] as const)('%s → E_LAYOUT', (_label, spec: HostSpec) => {
    const result = planRollback(observe(layout, buildHost(layout, spec)));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });
});
