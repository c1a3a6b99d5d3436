import { describe, expect, it } from 'vitest';
import {
  planMigration,
  pointLink,
  type LayoutAction,
  type LinkRole,
  type MigrationPlan,
  type SeedSource,
} from '../../src/domain/node/layout/migration-plan.js';
import { joinPath, resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import { slotPath, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  applyAction,
  applyActions,
  buildHost,
  dir,
  file,
  flexLayout,
  link,
  observe,
  resolveIn,
  runnableContent,
  staleTempsIn,
  tempNextTo,
  TEXT,
  unwrap,
  type Host,
  type HostSpec,
} from './layout-fixtures.js';

const ROOTS = ['/', '/sb'] as const;

const mkdir = (layout: SlotLayout): LayoutAction => ({
  kind: 'create-slot-directory',
  path: layout.slotDir,
  mode: 0o750,
});
const seed = (layout: SlotLayout, slot: SlotName, source: string): LayoutAction => ({
  kind: 'seed-slot',
  slot,
  source,
  target: slotPath(layout, slot),
  mode: 0o755,
});
const sweep = (path: string): LayoutAction => ({ kind: 'remove-stale-temp', path });
const point = (layout: SlotLayout, role: LinkRole, text: string): LayoutAction => ({
  kind: 'point-link',
  role,
  link: layout[role],
  text,
});
const outside = (layout: SlotLayout): string => joinPath(layout.root, 'opt/agent/bin');

/** Entry → current, stored as migration stores it. */
const entryLink = link(TEXT.entryToCurrent);
const managed: HostSpec = {
  entry: entryLink,
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(TEXT.blue),
  lastGood: link(TEXT.green),
};

type Expected = {
  readonly actions: readonly LayoutAction[];
  readonly currentSlot: SlotName;
  readonly lastGoodSlot: SlotName;
};
type Case = readonly [
  label: string,
  spec: (layout: SlotLayout) => HostSpec,
  expected: (layout: SlotLayout) => Expected,
];

const CASES: readonly Case[] = [
  // ---- legacy and half-migrated hosts (every state a crash can leave)
  [
    'legacy single file',
    () => ({ entry: file('legacy') }),
    (l) => ({
      actions: [
        mkdir(l),
        seed(l, 'blue', l.entry),
        point(l, 'current', 'aks-flex-node-blue'),
        point(l, 'lastGood', 'aks-flex-node-blue'),
        point(l, 'entry', '../lib/aks-flex-node/aks-flex-node-current'),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'half-migrated: slot directory only',
    () => ({ slotDir: dir(), entry: file('legacy') }),
    (l) => ({
      actions: [
        seed(l, 'blue', l.entry),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'half-migrated: blue seeded, no links',
    () => ({ entry: file('legacy'), blue: file('legacy') }),
    (l) => ({
      actions: [
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'half-migrated: current only',
    () => ({ entry: file('legacy'), blue: file('legacy'), current: link(TEXT.blue) }),
    (l) => ({
      actions: [point(l, 'lastGood', TEXT.blue), point(l, 'entry', TEXT.entryToCurrent)],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'half-migrated: current and last-good, entry still the legacy file',
    () => ({ entry: file('legacy'), blue: file('legacy'), current: link(TEXT.blue), lastGood: link(TEXT.blue) }),
    (l) => ({ actions: [point(l, 'entry', TEXT.entryToCurrent)], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'legacy entry is a symlink to an executable elsewhere',
    (l) => ({ entry: link(outside(l)), extra: { [outside(l)]: file('outside-bin') } }),
    (l) => ({
      actions: [
        mkdir(l),
        seed(l, 'blue', outside(l)),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'no current, blue not executable, green executable: green is used',
    () => ({ entry: file('legacy'), blue: file('blue-bin', false), green: file('green-bin') }),
    (l) => ({
      actions: [
        point(l, 'current', TEXT.green),
        point(l, 'lastGood', TEXT.green),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'green',
      lastGoodSlot: 'green',
    }),
  ],
  [
    'no current, both slots executable, last-good on green: last-good (green) becomes current',
    () => ({ entry: entryLink, blue: file('blue-bin'), green: file('green-bin'), lastGood: link(TEXT.green) }),
    (l) => ({ actions: [point(l, 'current', TEXT.green)], currentSlot: 'green', lastGoodSlot: 'green' }),
  ],
  [
    'no current, blue not executable, only the legacy file runs: blue is re-seeded',
    () => ({ entry: file('legacy'), blue: file('junk', false) }),
    (l) => ({
      actions: [
        seed(l, 'blue', l.entry),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],

  // ---- temp entries left by interrupted atomic writes
  [
    'a stale temp of an interrupted seed is swept first',
    (l) => ({ slotDir: dir(), entry: file('legacy'), extra: { [tempNextTo(l.blue)]: file('partial', false) } }),
    (l) => ({
      actions: [
        sweep(tempNextTo(l.blue)),
        seed(l, 'blue', l.entry),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'stale temps next to the record, state, entry and links of a managed host: only swept',
    (l) => ({
      ...managed,
      extra: {
        [tempNextTo(l.record, 'a')]: file('{}', false),
        [tempNextTo(l.state, 'b')]: file('{}', false),
        [tempNextTo(l.entry, 'c')]: link(TEXT.entryToCurrent),
        [tempNextTo(l.current, 'd')]: link(TEXT.green),
        [tempNextTo(l.lastGood, 'e')]: link(TEXT.blue),
        [tempNextTo(l.recoveryScript, 'f')]: file('#!/bin/sh', true),
      },
    }),
    (l) => ({
      actions: [
        tempNextTo(l.record, 'a'),
        tempNextTo(l.state, 'b'),
        tempNextTo(l.entry, 'c'),
        tempNextTo(l.current, 'd'),
        tempNextTo(l.lastGood, 'e'),
        tempNextTo(l.recoveryScript, 'f'),
      ]
        .sort()
        .map(sweep),
      currentSlot: 'blue',
      lastGoodSlot: 'green',
    }),
  ],
  [
    'dotfiles that are not temps of a layout file are left alone',
    (l) => ({
      ...managed,
      extra: {
        [`${l.slotDir}/.aks-flex-node-blue.bak`]: file('x'),
        [`${l.slotDir}/.aks-flex-node.tmp-1`]: file('x'),
        [`${l.slotDir}/aks-flex-node-blue.tmp-1`]: file('x'),
        [`${l.slotDir}/.aks-flex-node-bluetmp-1`]: file('x'),
      },
    }),
    () => ({ actions: [], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],

  // ---- managed hosts
  [
    'managed: current blue, last-good green',
    () => managed,
    () => ({ actions: [], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
  [
    'managed: current blue, last-good blue',
    () => ({ ...managed, lastGood: link(TEXT.blue) }),
    () => ({ actions: [], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'managed: current green, last-good blue',
    () => ({ ...managed, current: link(TEXT.green), lastGood: link(TEXT.blue) }),
    () => ({ actions: [], currentSlot: 'green', lastGoodSlot: 'blue' }),
  ],
  [
    'managed with absolute (re-rooted) link texts',
    (l) => ({ ...managed, current: link(l.blue), lastGood: link(l.green), entry: link(l.current) }),
    () => ({ actions: [], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
  [
    'managed: entry text to current with a redundant segment',
    () => ({ ...managed, entry: link('../lib/aks-flex-node/./aks-flex-node-current') }),
    () => ({ actions: [], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],

  // ---- dangling or odd current
  [
    'dangling current, blue present',
    () => ({ entry: entryLink, blue: file('blue-bin'), current: link(TEXT.green), lastGood: link(TEXT.green) }),
    (l) => ({
      actions: [point(l, 'current', TEXT.blue), point(l, 'lastGood', TEXT.blue)],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'dangling current, only green present',
    () => ({ entry: entryLink, green: file('green-bin'), current: link(TEXT.blue) }),
    (l) => ({
      actions: [point(l, 'current', TEXT.green), point(l, 'lastGood', TEXT.green)],
      currentSlot: 'green',
      lastGoodSlot: 'green',
    }),
  ],
  [
    'dangling current, only green present, last-good already green',
    () => ({ entry: entryLink, green: file('green-bin'), current: link(TEXT.blue), lastGood: link(TEXT.green) }),
    (l) => ({ actions: [point(l, 'current', TEXT.green)], currentSlot: 'green', lastGoodSlot: 'green' }),
  ],
  [
    'current resolves to a directory, both slots present: last-good (green) becomes current',
    () => ({ ...managed, current: link('.') }),
    (l) => ({ actions: [point(l, 'current', TEXT.green)], currentSlot: 'green', lastGoodSlot: 'green' }),
  ],
  [
    'current and last-good form a loop, green present',
    () => ({
      entry: entryLink,
      green: file('green-bin'),
      current: link('aks-flex-node-last-good'),
      lastGood: link(TEXT.current),
    }),
    (l) => ({
      actions: [point(l, 'current', TEXT.green), point(l, 'lastGood', TEXT.green)],
      currentSlot: 'green',
      lastGoodSlot: 'green',
    }),
  ],
  [
    'current resolves to a non-executable blue, green executable',
    () => ({ ...managed, blue: file('blue-bin', false), lastGood: link(TEXT.green) }),
    (l) => ({ actions: [point(l, 'current', TEXT.green)], currentSlot: 'green', lastGoodSlot: 'green' }),
  ],
  [
    'current resolves to an executable outside the slots: adopted into blue',
    (l) => ({
      slotDir: dir(),
      entry: file('legacy'),
      current: link(outside(l)),
      extra: { [outside(l)]: file('outside-bin') },
    }),
    (l) => ({
      actions: [
        seed(l, 'blue', outside(l)),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'current resolves to the legacy entry file: adopted into blue',
    () => ({ entry: file('legacy'), current: link('../../bin/aks-flex-node') }),
    (l) => ({
      actions: [
        seed(l, 'blue', l.entry),
        point(l, 'current', TEXT.blue),
        point(l, 'lastGood', TEXT.blue),
        point(l, 'entry', TEXT.entryToCurrent),
      ],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'current outside the slots while blue holds an older binary: blue is re-seeded from current',
    (l) => ({
      entry: entryLink,
      blue: file('old'),
      current: link(outside(l)),
      extra: { [outside(l)]: file('outside-bin') },
    }),
    (l) => ({
      actions: [seed(l, 'blue', outside(l)), point(l, 'current', TEXT.blue), point(l, 'lastGood', TEXT.blue)],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'current outside the slots while last-good names blue: adopted into green, blue kept for rollback',
    (l) => ({
      entry: entryLink,
      blue: file('previous'),
      current: link(outside(l)),
      lastGood: link(TEXT.blue),
      extra: { [outside(l)]: file('outside-bin') },
    }),
    (l) => ({
      actions: [seed(l, 'green', outside(l)), point(l, 'current', TEXT.green)],
      currentSlot: 'green',
      lastGoodSlot: 'blue',
    }),
  ],
  [
    'dangling current with blue present and a legacy entry file: blue is used, nothing is copied',
    () => ({
      slotDir: dir(),
      entry: file('legacy'),
      blue: file('previous'),
      lastGood: link(TEXT.blue),
      current: link('aks-flex-node-gone'),
    }),
    (l) => ({
      actions: [point(l, 'current', TEXT.blue), point(l, 'entry', TEXT.entryToCurrent)],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    }),
  ],

  // ---- last-good
  [
    'last-good dangling: repointed at current’s slot',
    () => ({ ...managed, green: null, lastGood: link(TEXT.green) }),
    (l) => ({ actions: [point(l, 'lastGood', TEXT.blue)], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'last-good missing: pointed at current’s slot',
    () => ({ ...managed, lastGood: null }),
    (l) => ({ actions: [point(l, 'lastGood', TEXT.blue)], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'last-good points at a non-executable slot: repointed',
    () => ({ ...managed, green: file('green-bin', false) }),
    (l) => ({ actions: [point(l, 'lastGood', TEXT.blue)], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'last-good points at an executable outside the slots: repointed',
    (l) => ({ ...managed, lastGood: link(outside(l)), extra: { [outside(l)]: file('outside-bin') } }),
    (l) => ({ actions: [point(l, 'lastGood', TEXT.blue)], currentSlot: 'blue', lastGoodSlot: 'blue' }),
  ],
  [
    'last-good on green with current on green: repointed when dangling',
    () => ({ ...managed, blue: null, current: link(TEXT.green), lastGood: link(TEXT.blue) }),
    (l) => ({ actions: [point(l, 'lastGood', TEXT.green)], currentSlot: 'green', lastGoodSlot: 'green' }),
  ],

  // ---- the compatibility entry
  [
    'entry links straight to a slot: replaced by a link to current',
    () => ({ ...managed, entry: link('../lib/aks-flex-node/aks-flex-node-blue') }),
    (l) => ({ actions: [point(l, 'entry', TEXT.entryToCurrent)], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
  [
    'entry missing on a managed host: created',
    () => ({ ...managed, entry: null }),
    (l) => ({ actions: [point(l, 'entry', TEXT.entryToCurrent)], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
  [
    'entry is a dangling link elsewhere: replaced',
    () => ({ ...managed, entry: link('/nowhere/agent') }),
    (l) => ({ actions: [point(l, 'entry', TEXT.entryToCurrent)], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
  [
    'entry is a regular file on a managed host (a legacy installer ran again): replaced',
    () => ({ ...managed, entry: file('reinstalled') }),
    (l) => ({ actions: [point(l, 'entry', TEXT.entryToCurrent)], currentSlot: 'blue', lastGoodSlot: 'green' }),
  ],
];

const FAILING: readonly (readonly [label: string, spec: (layout: SlotLayout) => HostSpec])[] = [
  ['nothing at all', () => ({})],
  ['only a slot directory', () => ({ slotDir: dir() })],
  ['non-executable legacy file', () => ({ entry: file('legacy', false) })],
  [
    'non-executable legacy file with the slot directory present',
    () => ({ slotDir: dir(), entry: file('legacy', false) }),
  ],
  [
    'non-executable legacy file and non-executable slots',
    () => ({ entry: file('legacy', false), blue: file('b', false), green: file('g', false) }),
  ],
  [
    'dangling current, nothing runnable, entry → current',
    () => ({ entry: entryLink, current: link(TEXT.blue), lastGood: link(TEXT.blue) }),
  ],
  ['dangling current, nothing runnable, entry missing', () => ({ current: link(TEXT.green) })],
  ['entry links to a directory', (l) => ({ entry: link(l.slotDir), slotDir: dir() })],
  ['entry is a dangling link', () => ({ entry: link('/nowhere/agent') })],
  [
    'current and entry form a loop',
    () => ({ entry: link(TEXT.entryToCurrent), current: link('../../bin/aks-flex-node') }),
  ],
  [
    'current resolves to a non-executable outside file',
    (l) => ({ current: link(outside(l)), extra: { [outside(l)]: file('x', false) } }),
  ],
];

function rows<T extends readonly unknown[]>(cases: readonly T[]): (readonly [string, ...T])[] {
  return ROOTS.flatMap((root) => cases.map((row) => [root, ...row] as const));
}

describe('planMigration', () => {
  it.each(rows(CASES))('root %s: %s', (root, _label, spec, expected) => {
    const layout = flexLayout(root);
    const plan = unwrap(planMigration(layout, observe(layout, buildHost(layout, spec(layout)))));
    expect(plan).toEqual(expected(layout));
  });

  it.each(rows(FAILING))('root %s: %s → E_LAYOUT', (root, _label, spec) => {
    const layout = flexLayout(root);
    const result = planMigration(layout, observe(layout, buildHost(layout, spec(layout))));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });

  it('stores relative link texts that resolve to the intended paths', () => {
    const layout = flexLayout('/sb');
    const plan = unwrap(planMigration(layout, observe(layout, buildHost(layout, { entry: file('legacy') }))));
    const links = plan.actions.filter((action) => action.kind === 'point-link');
    expect(links.map((action) => action.text)).toEqual([
      'aks-flex-node-blue',
      'aks-flex-node-blue',
      '../lib/aks-flex-node/aks-flex-node-current',
    ]);
    for (const action of links) {
      expect(action.text.startsWith('/')).toBe(false);
      const expected = action.role === 'entry' ? layout.current : layout.blue;
      expect(resolveLinkTarget(action.link, action.text)).toBe(expected);
    }
  });
});

describe('planMigration: applying the plan', () => {
  function apply(layout: SlotLayout, host: Host): { plan: MigrationPlan; host: Host } {
    const plan = unwrap(planMigration(layout, observe(layout, host)));
    return { plan, host: applyActions(layout, host, plan.actions) };
  }

  it.each(rows(CASES))('root %s: %s — idempotent: the applied plan plans nothing more', (root, _label, spec) => {
    const layout = flexLayout(root);
    const first = apply(layout, buildHost(layout, spec(layout)));
    const second = unwrap(planMigration(layout, observe(layout, first.host)));
    expect(second).toEqual({ actions: [], currentSlot: first.plan.currentSlot, lastGoodSlot: first.plan.lastGoodSlot });
  });

  it.each(rows(CASES))('root %s: %s — converged host is fully managed', (root, _label, spec) => {
    const layout = flexLayout(root);
    const { plan, host } = apply(layout, buildHost(layout, spec(layout)));
    expect(host.get(layout.slotDir)).toEqual(dir());
    expect(staleTempsIn(layout, host)).toEqual([]);
    expect(resolveIn(host, layout.current)).toEqual({
      kind: 'file',
      path: slotPath(layout, plan.currentSlot),
      executable: true,
    });
    expect(resolveIn(host, layout.lastGood)).toEqual({
      kind: 'file',
      path: slotPath(layout, plan.lastGoodSlot),
      executable: true,
    });
    const entry = host.get(layout.entry);
    expect(entry?.type).toBe('symlink');
    if (entry?.type === 'symlink') expect(resolveLinkTarget(layout.entry, entry.text)).toBe(layout.current);
    expect(runnableContent(host, layout.entry)).toBe(runnableContent(host, layout.current));
  });

  it.each(rows(CASES))('root %s: %s — crash after any action converges to the same host', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const full = apply(layout, start);
    let host = start;
    for (const action of full.plan.actions) {
      host = applyAction(layout, host, action);
      const resumed = apply(layout, host);
      expect(resumed.plan.currentSlot).toBe(full.plan.currentSlot);
      expect(resumed.host).toEqual(full.host);
    }
  });

  it.each(rows(CASES))('root %s: %s — the binary the host ran keeps running at every step', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const plan = unwrap(planMigration(layout, observe(layout, start)));
    // What the host runs now: current if it leads anywhere runnable, else the entry.
    const running = runnableContent(start, layout.current) ?? runnableContent(start, layout.entry);
    let host = start;
    for (const action of plan.actions) {
      host = applyAction(layout, host, action);
      const runs = runnableContent(host, layout.current) ?? runnableContent(host, layout.entry);
      expect(runs).not.toBeNull();
    }
    if (running !== null && plan.actions.some((action) => action.kind === 'seed-slot')) {
      expect(runnableContent(host, layout.current)).toBe(running);
    }
  });

  it.each(rows(CASES))('root %s: %s — a legacy entry file is copied before it is replaced', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const plan = unwrap(planMigration(layout, observe(layout, start)));
    const seedAt = plan.actions.findIndex((action) => action.kind === 'seed-slot');
    const entryAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'entry');
    const currentAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'current');
    const lastGoodAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'lastGood');
    if (seedAt >= 0 && entryAt >= 0) expect(seedAt).toBeLessThan(entryAt);
    if (seedAt >= 0) expect(currentAt).toBeGreaterThan(seedAt);
    if (currentAt >= 0 && entryAt >= 0) expect(currentAt).toBeLessThan(entryAt);
    if (currentAt >= 0 && lastGoodAt >= 0) expect(currentAt).toBeLessThan(lastGoodAt);
    const legacy = start.get(layout.entry)?.type === 'file' ? runnableContent(start, layout.entry) : null;
    if (legacy !== null) {
      // The legacy entry stays runnable after every action; when it is the seed source, with the
      // same bytes, and current ends up running those bytes.
      const seedsFromEntry = plan.actions.some(
        (action) => action.kind === 'seed-slot' && action.source === layout.entry,
      );
      let host = start;
      for (const action of plan.actions) {
        host = applyAction(layout, host, action);
        const stillRuns = runnableContent(host, layout.entry);
        expect(stillRuns).not.toBeNull();
        if (seedsFromEntry) expect(stillRuns).toBe(legacy);
      }
      if (seedsFromEntry) expect(runnableContent(host, layout.current)).toBe(legacy);
    }
  });
});

describe('planMigration: last-good must name a slot itself', () => {
  // A last-good link that reaches a slot only through another link (the current link, or the
  // entry → current chain) follows current: after the next switch it names the candidate, and
  // rollback goes nowhere. Migration must repoint it at the slot.
  it.each(
    rows([
      ['last-good → current link (relative)', () => ({ ...managed, lastGood: link(TEXT.current) })],
      ['last-good → current link (absolute)', (l: SlotLayout) => ({ ...managed, lastGood: link(l.current) })],
      ['last-good → compatibility entry', (l: SlotLayout) => ({ ...managed, lastGood: link(l.entry) })],
    ] as const),
  )('root %s: %s → repointed at blue', (root, _label, spec) => {
    const layout = flexLayout(root);
    const plan = unwrap(planMigration(layout, observe(layout, buildHost(layout, spec(layout)))));
    expect(plan).toEqual({
      actions: [point(layout, 'lastGood', TEXT.blue)],
      currentSlot: 'blue',
      lastGoodSlot: 'blue',
    });
  });
});

describe('pointLink', () => {
  it.each([
    ['/', 'current', (l: SlotLayout) => l.blue, 'aks-flex-node-blue'],
    ['/', 'current', (l: SlotLayout) => l.green, 'aks-flex-node-green'],
    ['/', 'lastGood', (l: SlotLayout) => l.green, 'aks-flex-node-green'],
    ['/', 'entry', (l: SlotLayout) => l.current, '../lib/aks-flex-node/aks-flex-node-current'],
    ['/sb', 'current', (l: SlotLayout) => l.blue, 'aks-flex-node-blue'],
    ['/sb', 'entry', (l: SlotLayout) => l.current, '../lib/aks-flex-node/aks-flex-node-current'],
  ] as const)('root %s: %s', (root, role, target, text) => {
    const layout = flexLayout(root);
    const action = pointLink(layout, role, target(layout));
    expect(action).toEqual({ kind: 'point-link', role, link: layout[role], text });
    expect(resolveLinkTarget(layout[role], text)).toBe(target(layout));
  });

  it('entry and slots in unrelated trees', () => {
    const layout = flexLayout('/sb', { entry: '/usr/bin/agent', slotDir: '/opt/slots' });
    const action = pointLink(layout, 'entry', layout.current);
    expect(action).toEqual({
      kind: 'point-link',
      role: 'entry',
      link: '/sb/usr/bin/agent',
      text: '../../opt/slots/aks-flex-node-current',
    });
  });
});

describe('planMigration: repairing current never picks an unfit binary', () => {
  const l = flexLayout('/sb');
  const dangling: HostSpec = {
    entry: entryLink,
    blue: file('blue-bin'),
    green: file('green-bin'),
    current: link('aks-flex-node-gone'),
    lastGood: link(TEXT.green),
  };
  const choose = (spec: HostSpec, unfit: readonly SeedSource[]) => {
    const result = planMigration(l, observe(l, buildHost(l, spec)), new Set(unfit));
    return result.ok ? result.value.currentSlot : result.failure.code;
  };

  it.each<[string, readonly SeedSource[], string]>([
    ['last-good fit: last-good is current', [], 'green'],
    ['last-good quarantined or too old: blue', ['green'], 'blue'],
    ['both slots unfit, no legacy file: refused, nothing picked', ['green', 'blue'], 'E_LAYOUT'],
  ])('%s', (_label, unfit, expected) => {
    expect(choose(dangling, unfit)).toBe(expected);
  });

  it('a quarantined blue is skipped for the legacy file, which is seeded into it', () => {
    const result = unwrapPlan(
      planMigration(
        l,
        observe(l, buildHost(l, { entry: file('legacy'), blue: file('crasher') })),
        new Set<SeedSource>(['blue']),
      ),
    );
    expect(result.currentSlot).toBe('blue');
    expect(result.actions).toContainEqual(seed(l, 'blue', l.entry));
  });

  it('an unfit legacy file is never seeded', () => {
    expect(choose({ entry: file('legacy') }, ['entry'])).toBe('E_LAYOUT');
  });
});

function unwrapPlan<T>(result: { ok: true; value: T } | { ok: false; failure: { code: string } }): T {
  if (!result.ok) throw new Error(result.failure.code);
  return result.value;
}
