import { describe, expect, it } from 'vitest';
import { planMigration, pointLink, type SeedSource } from '../../src/domain/node/layout/migration-plan.js';
import { resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import type { SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import { flexLayout, TEXT, unwrap } from './layout-fixtures.js';
import { buildHost, file, link, observe, type HostSpec } from './layout-host-model.js';
import { LEGACY_CASES } from './migration-cases-legacy.js';
import { MANAGED_CASES } from './migration-cases-managed.js';
import { entryLink, FAILING, managed, point, rows, seed } from './migration-fixtures.js';

const CASES = [...LEGACY_CASES, ...MANAGED_CASES];

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
