/** Activation cases, part one: a legacy host that is not yet managed. */
import { joinPath } from '../../src/domain/node/layout/posix-path.js';
import { TEXT } from './layout-fixtures.js';
import { dir, file, link } from './layout-host-model.js';
import {
  assets,
  CHANGED,
  entryLink,
  IDENTICAL,
  init,
  install,
  legacy,
  lgBlue,
  lgGreen,
  mark,
  migrationActions,
  plan,
  restart,
  sw,
  sync,
  V,
  wait,
  type Case,
} from './upgrade-plan-fixtures.js';

export const LEGACY_CASES: readonly Case[] = [
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
];
