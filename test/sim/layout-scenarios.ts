import type { MemoryFileSystem, TreeNodeSpec, TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { activateOver, LAYOUT, migrateOver, rollbackOver } from './layout-world.js';

// The commands the layout crash-point suite enumerates, each on the host it starts from.

const V0 = '#!/bin/sh\necho v0\n';
const V1 = '#!/bin/sh\necho v1\n';
const V2 = '#!/bin/sh\necho v2 with a longer body\n';
const CANDIDATE = '/staging/candidate';
const ENTRY_TEXT = '../lib/aks-flex-node/aks-flex-node-current';

export interface Scenario {
  readonly name: string;
  readonly tree: TreeSpec;
  /** The command, as a freshly started process runs it over `fs`. */
  readonly run: (fs: MemoryFileSystem) => Promise<unknown>;
  readonly known: readonly string[];
  /** Whether to enumerate a second crash during recovery too (default yes). */
  readonly secondCrash?: boolean;
  /** Where current, last-good and the entry must lead once the command has completed. */
  readonly final: { readonly current: string; readonly lastGood: string; readonly currentContent: string };
  /**
   * The host starts without a runnable agent (current leads to a broken slot or nowhere) and
   * the command is what repairs it: cut short before current moved, it is still as it was.
   */
  readonly startsBroken?: boolean;
  /** Entries the command must leave exactly as they were (a broken spare slot). */
  readonly untouched?: readonly string[];
}

const exe = (content: string) => ({ file: content, mode: 0o755 });
/** `agent-upgrade activate CANDIDATE`: the activation's step loop runs the plan's layout steps. */
const activate = (fs: MemoryFileSystem) => activateOver(fs, { path: CANDIDATE, version: '2.0.0' });
const managedOn = (slot: 'blue' | 'green', lastGood: 'blue' | 'green') => ({
  [LAYOUT.current]: { symlink: `aks-flex-node-${slot}` },
  [LAYOUT.lastGood]: { symlink: `aks-flex-node-${lastGood}` },
  [LAYOUT.entry]: { symlink: ENTRY_TEXT },
});

export const scenarios: readonly Scenario[] = [
  {
    name: 'migrate a legacy single-file install',
    tree: { [LAYOUT.entry]: exe(V1) },
    run: (fs) => migrateOver(fs),
    known: [V1],
    final: { current: LAYOUT.blue, lastGood: LAYOUT.blue, currentContent: V1 },
  },
  {
    name: 'migrate a host left with only a seeded blue slot',
    tree: { [LAYOUT.entry]: exe(V1), [LAYOUT.blue]: exe(V1) },
    run: (fs) => migrateOver(fs),
    known: [V1],
    final: { current: LAYOUT.blue, lastGood: LAYOUT.blue, currentContent: V1 },
  },
  {
    name: 'activate a new candidate on a managed host',
    tree: { [LAYOUT.blue]: exe(V1), ...managedOn('blue', 'blue'), [CANDIDATE]: exe(V2) },
    run: activate,
    known: [V1, V2],
    final: { current: LAYOUT.green, lastGood: LAYOUT.blue, currentContent: V2 },
  },
  {
    name: 'activate while last-good names the slot about to be overwritten',
    tree: { [LAYOUT.blue]: exe(V1), [LAYOUT.green]: exe(V0), ...managedOn('blue', 'green'), [CANDIDATE]: exe(V2) },
    run: activate,
    known: [V0, V1, V2],
    final: { current: LAYOUT.green, lastGood: LAYOUT.blue, currentContent: V2 },
  },
  {
    name: 'activate on a legacy host (migration first)',
    secondCrash: false,
    tree: { [LAYOUT.entry]: exe(V1), [CANDIDATE]: exe(V2) },
    run: activate,
    known: [V1, V2],
    final: { current: LAYOUT.green, lastGood: LAYOUT.blue, currentContent: V2 },
  },
  {
    name: 'roll back to last-good',
    tree: { [LAYOUT.blue]: exe(V1), [LAYOUT.green]: exe(V2), ...managedOn('green', 'blue') },
    run: (fs) => rollbackOver(fs),
    known: [V1, V2],
    final: { current: LAYOUT.blue, lastGood: LAYOUT.blue, currentContent: V1 },
  },
  ...brokenSpareScenarios(),
];

/**
 * A blue slot of the wrong type (docs/operations.md#broken-slots) blocks neither the repair of
 * current from the valid green last-good nor a rollback to it, and is never written.
 */
function brokenSpareScenarios(): Scenario[] {
  const kinds: readonly (readonly [string, TreeNodeSpec])[] = [
    // Names stay under 40 characters: vitest shortens longer ones, which would then collide.
    ['a symlink', { symlink: 'aks-flex-node-green' }],
    ['a directory', { directory: true }],
    ['a FIFO', { fifo: true }],
  ];
  const onGreen = { current: LAYOUT.green, lastGood: LAYOUT.green, currentContent: V1 };
  return kinds.flatMap(([label, blue]): Scenario[] => [
    {
      // Current dangles; last-good names green.
      name: `migrate with blue ${label}`,
      tree: {
        [LAYOUT.blue]: blue,
        [LAYOUT.green]: exe(V1),
        ...managedOn('blue', 'green'),
        [LAYOUT.current]: { symlink: 'aks-flex-node-gone' },
      },
      run: (fs) => migrateOver(fs),
      known: [V1],
      final: onGreen,
      startsBroken: true,
      untouched: [LAYOUT.blue],
    },
    {
      name: `roll back from blue, ${label}`,
      tree: { [LAYOUT.blue]: blue, [LAYOUT.green]: exe(V1), ...managedOn('blue', 'green') },
      run: (fs) => rollbackOver(fs),
      known: [V1],
      final: onGreen,
      startsBroken: true,
      untouched: [LAYOUT.blue],
    },
  ]);
}
