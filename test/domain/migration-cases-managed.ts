/** Migration cases, part two: managed hosts, a dangling or odd current, last-good, the entry. */
import { TEXT } from './layout-fixtures.js';
import { dir, file, link } from './layout-host-model.js';
import { entryLink, managed, outside, point, seed, type Case } from './migration-fixtures.js';

export const MANAGED_CASES: readonly Case[] = [
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
