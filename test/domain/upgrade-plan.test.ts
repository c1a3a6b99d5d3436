import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import { planMigration, pointLink, type LayoutAction } from '../../src/domain/node/layout/migration-plan.js';
import { joinPath, resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import { slotPath, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  describeStep,
  planActivation,
  planRollback,
  type ActivationInput,
  type ActivationPlan,
  type ActivationStep,
} from '../../src/domain/node/activation/upgrade-plan.js';
import {
  applyActions,
  buildHost,
  DIGEST_A,
  dir,
  DIGEST_B,
  file,
  flexLayout,
  link,
  observe,
  resolveIn,
  runnableContent,
  tempNextTo,
  TEXT,
  unwrap,
  type Host,
  type HostSpec,
} from './layout-fixtures.js';

const ROOTS = ['/', '/sb'] as const;

// ---- hosts

const entryLink = link(TEXT.entryToCurrent);
const legacy: HostSpec = { entry: file('legacy') };
const managedOn = (current: SlotName, lastGood: HostSpec['lastGood']): HostSpec => ({
  entry: entryLink,
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(current === 'blue' ? TEXT.blue : TEXT.green),
  lastGood,
});
const lgBlue = link(TEXT.blue);
const lgGreen = link(TEXT.green);
const lgDangling = link('aks-flex-node-gone');

// ---- steps

const V: ActivationStep = { kind: 'verify-candidate' };
const protect = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'protect' });
const repair = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'repair' });
const install = (slot: SlotName): ActivationStep => ({ kind: 'install-candidate', slot });
const mark = (previous: SlotName, candidate: SlotName): ActivationStep => ({
  kind: 'mark-activation',
  previous,
  candidate,
});
const sw = (slot: SlotName): ActivationStep => ({ kind: 'switch-current', slot });
const assets: ActivationStep = { kind: 'update-service-assets' };
const restart: ActivationStep = { kind: 'restart-service' };
const wait = (slot: SlotName): ActivationStep => ({ kind: 'wait-healthy', slot });
const sync = (slot: SlotName): ActivationStep => ({ kind: 'sync-container', slot });
const init = (actions: readonly LayoutAction[]): ActivationStep => ({ kind: 'initialize-layout', actions });

interface Options {
  readonly candidate: Sha256;
  readonly active: Sha256;
  readonly serviceAssetsCurrent: boolean;
  readonly serviceActive: boolean;
  readonly containerPresent: boolean;
}
const CHANGED: Options = {
  candidate: DIGEST_B,
  active: DIGEST_A,
  serviceAssetsCurrent: true,
  serviceActive: true,
  containerPresent: false,
};
const IDENTICAL: Options = { ...CHANGED, candidate: DIGEST_A };

function inputFor(layout: SlotLayout, host: Host, options: Options): ActivationInput {
  return {
    layout,
    facts: observe(layout, host),
    candidateDigest: options.candidate,
    activeDigest: options.active,
    serviceAssetsCurrent: options.serviceAssetsCurrent,
    serviceActive: options.serviceActive,
    containerPresent: options.containerPresent,
  };
}

/** The migration actions the same host would need (what initialize-layout must carry). */
function migrationActions(layout: SlotLayout, spec: HostSpec): readonly LayoutAction[] {
  return unwrap(planMigration(layout, observe(layout, buildHost(layout, spec)))).actions;
}

type Case = readonly [
  label: string,
  spec: (layout: SlotLayout) => HostSpec,
  options: Options,
  expected: (layout: SlotLayout, spec: HostSpec) => ActivationPlan,
];

const plan = (
  initializeLayout: boolean,
  activeSlot: SlotName,
  targetSlot: SlotName,
  candidateChanged: boolean,
  steps: readonly ActivationStep[],
  rollbackSlot: SlotName = activeSlot,
): ActivationPlan => ({ initializeLayout, activeSlot, targetSlot, candidateChanged, rollbackSlot, steps });

const CASES: readonly Case[] = [
  // ---- a legacy host that is not yet managed
  [
    'legacy host, different candidate: initialise, target green, roll back to blue',
    () => legacy,
    CHANGED,
    (l, s) =>
      plan(true, 'blue', 'green', true, [
        V,
        init(migrationActions(l, s)),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'legacy host, identical candidate: initialise only, target blue',
    () => legacy,
    IDENTICAL,
    (l, s) => plan(true, 'blue', 'blue', false, [V, init(migrationActions(l, s)), restart, wait('blue')]),
  ],
  [
    'legacy host, every option: assets stale, service inactive, container present',
    () => legacy,
    { ...CHANGED, serviceAssetsCurrent: false, serviceActive: false, containerPresent: true },
    (l, s) =>
      plan(true, 'blue', 'green', true, [
        V,
        init(migrationActions(l, s)),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        assets,
        sync('green'),
      ]),
  ],
  [
    'half-migrated host (entry still the legacy file), different candidate',
    () => ({ entry: file('legacy'), blue: file('legacy'), current: link(TEXT.blue), lastGood: lgBlue }),
    CHANGED,
    (l, s) =>
      plan(true, 'blue', 'green', true, [
        V,
        init(migrationActions(l, s)),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'dangling current, blue present, last-good on green: initialise on last-good (green), install blue',
    () => ({
      entry: entryLink,
      blue: file('blue-bin'),
      green: file('green-bin'),
      current: link('aks-flex-node-gone'),
      lastGood: lgGreen,
    }),
    CHANGED,
    (l, s) =>
      plan(true, 'green', 'blue', true, [
        V,
        init(migrationActions(l, s)),
        mark('green', 'blue'),
        install('blue'),
        sw('blue'),
        restart,
        wait('blue'),
      ]),
  ],
  [
    'dangling current, only green present: green is active, target blue',
    () => ({ entry: entryLink, green: file('green-bin'), current: link(TEXT.blue) }),
    CHANGED,
    (l, s) =>
      plan(true, 'green', 'blue', true, [
        V,
        init(migrationActions(l, s)),
        mark('green', 'blue'),
        install('blue'),
        sw('blue'),
        restart,
        wait('blue'),
      ]),
  ],
  [
    'current resolves outside the slots: adopted into blue, target green',
    (l) => ({
      slotDir: dir(),
      entry: file('legacy'),
      current: link(joinPath(l.root, 'opt/agent')),
      extra: { [joinPath(l.root, 'opt/agent')]: file('outside') },
    }),
    CHANGED,
    (l, s) =>
      plan(true, 'blue', 'green', true, [
        V,
        init(migrationActions(l, s)),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],

  // ---- managed on blue
  [
    'managed on blue, last-good blue, different candidate: target green, last-good untouched',
    () => managedOn('blue', lgBlue),
    CHANGED,
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'managed on blue, last-good green, different candidate: protect BEFORE install',
    () => managedOn('blue', lgGreen),
    CHANGED,
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        protect('blue'),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'managed on blue with a stale temp next to green, different candidate: sweep, then install',
    (l) => ({ ...managedOn('blue', lgBlue), extra: { [tempNextTo(l.green)]: file('partial', false) } }),
    CHANGED,
    (l) =>
      plan(false, 'blue', 'green', true, [
        V,
        { kind: 'remove-stale-temps', paths: [tempNextTo(l.green)] },
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'managed on blue, last-good dangling, different candidate: repair BEFORE install',
    () => managedOn('blue', lgDangling),
    CHANGED,
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        repair('blue'),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],
  [
    'managed on blue, last-good missing, different candidate: repair BEFORE install',
    () => managedOn('blue', null),
    CHANGED,
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        repair('blue'),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
      ]),
  ],

  // ---- managed on green
  [
    'managed on green, last-good green, different candidate: target blue',
    () => managedOn('green', lgGreen),
    CHANGED,
    () =>
      plan(false, 'green', 'blue', true, [
        V,
        mark('green', 'blue'),
        install('blue'),
        sw('blue'),
        restart,
        wait('blue'),
      ]),
  ],
  [
    'managed on green, last-good blue, different candidate: protect green before install blue',
    () => managedOn('green', lgBlue),
    CHANGED,
    () =>
      plan(false, 'green', 'blue', true, [
        V,
        protect('green'),
        mark('green', 'blue'),
        install('blue'),
        sw('blue'),
        restart,
        wait('blue'),
      ]),
  ],

  // ---- identical candidate
  [
    'identical candidate on blue, last-good green: nothing installed, target = active, rollback to last-good',
    () => managedOn('blue', lgGreen),
    IDENTICAL,
    () => plan(false, 'blue', 'blue', false, [V, restart, wait('blue')], 'green'),
  ],
  [
    'identical candidate on green, last-good green',
    () => managedOn('green', lgGreen),
    IDENTICAL,
    () => plan(false, 'green', 'green', false, [V, restart, wait('green')]),
  ],
  [
    'identical candidate, last-good missing: repair last-good',
    () => managedOn('blue', null),
    IDENTICAL,
    () => plan(false, 'blue', 'blue', false, [V, repair('blue'), restart, wait('blue')]),
  ],
  [
    'identical candidate, last-good dangling: repair last-good',
    () => managedOn('green', lgDangling),
    IDENTICAL,
    () => plan(false, 'green', 'green', false, [V, repair('green'), restart, wait('green')]),
  ],

  // ---- service and container options
  [
    'service assets stale: update-service-assets after the switch, before the restart',
    () => managedOn('blue', lgBlue),
    { ...CHANGED, serviceAssetsCurrent: false },
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        assets,
        restart,
        wait('green'),
      ]),
  ],
  [
    'service inactive: no restart, no health wait',
    () => managedOn('blue', lgBlue),
    { ...CHANGED, serviceActive: false },
    () => plan(false, 'blue', 'green', true, [V, mark('blue', 'green'), install('green'), sw('green')]),
  ],
  [
    'container present: sync the target into the container last',
    () => managedOn('blue', lgGreen),
    { ...CHANGED, containerPresent: true },
    () =>
      plan(false, 'blue', 'green', true, [
        V,
        protect('blue'),
        mark('blue', 'green'),
        install('green'),
        sw('green'),
        restart,
        wait('green'),
        sync('green'),
      ]),
  ],
  [
    'identical candidate, assets stale, inactive, container present',
    () => managedOn('green', lgBlue),
    { ...IDENTICAL, serviceAssetsCurrent: false, serviceActive: false, containerPresent: true },
    () => plan(false, 'green', 'green', false, [V, assets, sync('green')], 'blue'),
  ],
  [
    'identical candidate, every option on',
    () => managedOn('blue', lgGreen),
    { ...IDENTICAL, serviceAssetsCurrent: false, containerPresent: true },
    () => plan(false, 'blue', 'blue', false, [V, assets, restart, wait('blue'), sync('blue')], 'green'),
  ],
];

function rows<T extends readonly unknown[]>(cases: readonly T[]): (readonly [string, ...T])[] {
  return ROOTS.flatMap((root) => cases.map((row) => [root, ...row] as const));
}

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

// ---------------------------------------------------------------------------------------------
// Executing a plan on the host model: the safety properties hold whatever the exact steps.

const SAFETY_HOSTS: readonly (readonly [string, (layout: SlotLayout) => HostSpec])[] = [
  ...CASES.map(([label, spec]) => [label, spec] as const),
  ['last-good names the green slot, which is missing', () => ({ ...managedOn('blue', lgGreen), green: null })],
  [
    'last-good names a non-executable green',
    () => ({ ...managedOn('blue', lgGreen), green: file('green-bin', false) }),
  ],
  ['last-good names the current link (reaches blue only through current)', () => managedOn('blue', link(TEXT.current))],
  [
    'last-good names the compatibility entry (reaches blue through entry → current)',
    (l) => managedOn('blue', link(l.entry)),
  ],
  [
    'managed host with a stale temp next to the green slot',
    (l) => ({ ...managedOn('blue', lgGreen), extra: { [tempNextTo(l.green)]: file('partial', false) } }),
  ],
];

function execute(layout: SlotLayout, host: Host, result: ActivationPlan): Host {
  let state = host;
  const set = (path: string, node: ReturnType<typeof file>): void => {
    const next = new Map(state);
    next.set(path, node);
    state = next;
  };
  for (const step of result.steps) {
    switch (step.kind) {
      case 'initialize-layout':
        state = applyActions(layout, state, step.actions);
        break;
      case 'remove-stale-temps':
        state = applyActions(
          layout,
          state,
          step.paths.map((path) => ({ kind: 'remove-stale-temp', path })),
        );
        break;
      case 'point-last-good': {
        const action = pointLink(layout, 'lastGood', slotPath(layout, step.slot));
        if (action.kind === 'point-link') set(action.link, link(action.text));
        break;
      }
      case 'install-candidate': {
        const target = slotPath(layout, step.slot);
        // I3: the active slot is never written while active.
        expect(resolveIn(state, layout.current)).not.toMatchObject({ path: target });
        // Last-good never leads to the slot being overwritten.
        expect(resolveIn(state, layout.lastGood)).not.toMatchObject({ path: target });
        set(target, file('candidate'));
        break;
      }
      case 'switch-current': {
        // Before the switch, last-good names the rollback slot itself (not via current).
        expect(directLinkTarget(state, layout.lastGood)).toBe(slotPath(layout, result.rollbackSlot));
        const action = pointLink(layout, 'current', slotPath(layout, step.slot));
        if (action.kind === 'point-link') set(action.link, link(action.text));
        break;
      }
      default:
        break;
    }
  }
  return state;
}

function migrationActionsOf(layout: SlotLayout, host: Host): readonly LayoutAction[] {
  return unwrap(planMigration(layout, observe(layout, host))).actions;
}

function directLinkTarget(host: Host, path: string): string | null {
  const node = host.get(path);
  return node?.type === 'symlink' ? resolveLinkTarget(path, node.text) : null;
}

describe('planActivation: executing the plan', () => {
  it.each(
    rows(
      SAFETY_HOSTS.flatMap(([label, spec]) => [
        [label, 'changed', spec, CHANGED] as const,
        [label, 'identical', spec, IDENTICAL] as const,
      ]),
    ),
  )('root %s: %s (%s candidate)', (root, _label, _kind, spec, options) => {
    const layout = flexLayout(root);
    const host = buildHost(layout, spec(layout));
    const result = unwrap(planActivation(inputFor(layout, host, options)));
    // The binary the host runs once the layout is converged: the one to roll back to.
    const before = runnableContent(applyActions(layout, host, migrationActionsOf(layout, host)), layout.current);
    expect(before).not.toBeNull();
    const after = execute(layout, host, result);

    // Current names the target slot directly and runs the candidate (or the unchanged binary).
    expect(directLinkTarget(after, layout.current)).toBe(slotPath(layout, result.targetSlot));
    expect(runnableContent(after, layout.current)).toBe(result.candidateChanged ? 'candidate' : before);
    // Last-good names the rollback slot directly, and that slot still runs the previous binary.
    expect(
      directLinkTarget(after, layout.lastGood) === slotPath(layout, 'blue') ||
        directLinkTarget(after, layout.lastGood) === slotPath(layout, 'green'),
    ).toBe(true);
    if (result.candidateChanged) {
      expect(directLinkTarget(after, layout.lastGood)).toBe(slotPath(layout, result.rollbackSlot));
      expect(runnableContent(after, layout.lastGood)).toBe(before);
    }
    // The compatibility entry leads to current; the layout needs nothing more.
    expect(directLinkTarget(after, layout.entry)).toBe(layout.current);
    expect(unwrap(planMigration(layout, observe(layout, after))).actions).toEqual([]);
  });

  it.each(rows(CASES))('root %s: %s — step order is the documented one', (root, _label, spec, options) => {
    const layout = flexLayout(root);
    const result = unwrap(planActivation(inputFor(layout, buildHost(layout, spec(layout)), options)));
    const ORDER = [
      'verify-candidate',
      'initialize-layout',
      'remove-stale-temps',
      'point-last-good:repair',
      'point-last-good:protect',
      'mark-activation',
      'install-candidate',
      'switch-current',
      'update-service-assets',
      'restart-service',
      'wait-healthy',
      'sync-container',
    ];
    const ranks = result.steps.map((step) =>
      ORDER.indexOf(step.kind === 'point-last-good' ? `${step.kind}:${step.why}` : step.kind),
    );
    expect(ranks.every((rank) => rank >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(new Set(ranks).size).toBe(ranks.length);
    expect(result.steps[0]).toEqual(V);
    // Install and switch come as a pair, only for a changed candidate, and name the target.
    const installs = result.steps.filter((step) => step.kind === 'install-candidate');
    const switches = result.steps.filter((step) => step.kind === 'switch-current');
    expect(installs).toEqual(result.candidateChanged ? [install(result.targetSlot)] : []);
    expect(switches).toEqual(result.candidateChanged ? [sw(result.targetSlot)] : []);
    if (result.candidateChanged) expect(result.targetSlot).not.toBe(result.activeSlot);
    else expect(result.targetSlot).toBe(result.activeSlot);
    if (result.candidateChanged) expect(result.rollbackSlot).toBe(result.activeSlot);
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
