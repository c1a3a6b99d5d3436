/** Actions, hosts and case shapes shared by the migration-plan tests. */
import type { LayoutAction, LinkRole } from '../../src/domain/node/layout/migration-plan.js';
import { joinPath } from '../../src/domain/node/layout/posix-path.js';
import { slotPath, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import { TEXT } from './layout-fixtures.js';
import { dir, file, link, type HostSpec } from './layout-host-model.js';

const ROOTS = ['/', '/sb'] as const;

export const mkdir = (layout: SlotLayout): LayoutAction => ({
  kind: 'create-slot-directory',
  path: layout.slotDir,
  mode: 0o750,
});
export const seed = (layout: SlotLayout, slot: SlotName, source: string): LayoutAction => ({
  kind: 'seed-slot',
  slot,
  source,
  target: slotPath(layout, slot),
  mode: 0o755,
});
export const sweep = (path: string): LayoutAction => ({ kind: 'remove-stale-temp', path });
export const point = (layout: SlotLayout, role: LinkRole, text: string): LayoutAction => ({
  kind: 'point-link',
  role,
  link: layout[role],
  text,
});
export const outside = (layout: SlotLayout): string => joinPath(layout.root, 'opt/agent/bin');

/** Entry → current, stored as migration stores it. */
export const entryLink = link(TEXT.entryToCurrent);
export const managed: HostSpec = {
  entry: entryLink,
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(TEXT.blue),
  lastGood: link(TEXT.green),
};

export type Expected = {
  readonly actions: readonly LayoutAction[];
  readonly currentSlot: SlotName;
  readonly lastGoodSlot: SlotName;
};
export type Case = readonly [
  label: string,
  spec: (layout: SlotLayout) => HostSpec,
  expected: (layout: SlotLayout) => Expected,
];

/** Hosts whose migration is refused with E_LAYOUT. */
export const FAILING: readonly (readonly [label: string, spec: (layout: SlotLayout) => HostSpec])[] = [
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

export function rows<T extends readonly unknown[]>(cases: readonly T[]): (readonly [string, ...T])[] {
  return ROOTS.flatMap((root) => cases.map((row) => [root, ...row] as const));
}
