/** Migration cases, part one: legacy and half-migrated hosts, and temp entries of interrupted writes. */
import { TEXT } from './layout-fixtures.js';
import { dir, file, link, tempNextTo } from './layout-host-model.js';
import { entryLink, managed, mkdir, outside, point, seed, sweep, type Case } from './migration-fixtures.js';

export const LEGACY_CASES: readonly Case[] = [
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
];
