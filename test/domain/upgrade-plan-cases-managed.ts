/** Activation cases, part two: managed hosts, an identical candidate, service and container options. */
import { file, tempNextTo } from './layout-host-model.js';
import {
  assets,
  CHANGED,
  IDENTICAL,
  install,
  lgBlue,
  lgDangling,
  lgGreen,
  managedOn,
  mark,
  plan,
  protect,
  repair,
  restart,
  sw,
  sync,
  V,
  wait,
  type Case,
} from './upgrade-plan-fixtures.js';

export const MANAGED_CASES: readonly Case[] = [
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
