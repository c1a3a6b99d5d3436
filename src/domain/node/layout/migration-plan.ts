import { fail, ok, type Result } from '../../common/failure.js';
import {
  describeBrokenSlot,
  executableTarget,
  isBrokenSlot,
  linkedSlot,
  slotFileExecutable,
  type LayoutFacts,
} from './host-facts.js';
import { dirnamePath, relativePath, resolveLinkTarget } from './posix-path.js';
import { BINARY_MODE, SLOT_DIR_MODE, slotAt, slotPath, type SlotLayout } from './slot-layout.js';
import { otherSlot, type SlotName } from './slot.js';

/**
 * One durable change to the layout. The app runs each through exactly one port call, so every
 * action is a crash point; after a crash the plan is simply computed again from fresh facts.
 */
export type LayoutAction =
  | { readonly kind: 'create-slot-directory'; readonly path: string; readonly mode: number }
  | {
      readonly kind: 'seed-slot';
      readonly slot: SlotName;
      readonly source: string;
      readonly target: string;
      readonly mode: number;
    }
  | { readonly kind: 'point-link'; readonly role: LinkRole; readonly link: string; readonly text: string }
  | { readonly kind: 'remove-stale-temp'; readonly path: string }
  | { readonly kind: 'converge-service-assets' };

export type LinkRole = 'current' | 'lastGood' | 'entry';

export interface MigrationPlan {
  /** Empty when the layout is already managed and complete. */
  readonly actions: readonly LayoutAction[];
  /** The slot current will name once the actions ran. */
  readonly currentSlot: SlotName;
  readonly lastGoodSlot: SlotName;
}

/**
 * Plans the convergence of a host — legacy single file, half-migrated, or managed — into the
 * managed layout (docs/operations.md#migrate). Order is what makes it crash-safe: a legacy binary
 * is copied into a slot before any link moves, current is pointed before last-good and the entry,
 * and the compatibility entry (the legacy file itself) is replaced last, so at every step some
 * path still leads to a runnable binary. Temp entries left by an interrupted write are swept
 * first. Service assets are converged separately by the caller.
 */
/**
 * The binaries current may be repaired from, by where they are: current's own target outside the
 * slots, a slot, or the legacy entry file. Those named here are unfit — quarantined, or older
 * than the highest committed version — and are never made current.
 */
export type SeedSource = 'outside' | SlotName | 'entry';

export function planMigration(
  layout: SlotLayout,
  facts: LayoutFacts,
  unfit: ReadonlySet<SeedSource> = new Set(),
): Result<MigrationPlan> {
  const actions: LayoutAction[] = facts.staleTemps.map((path) => ({ kind: 'remove-stale-temp', path }));
  if (facts.slotDir.kind === 'missing') {
    actions.push({ kind: 'create-slot-directory', path: layout.slotDir, mode: SLOT_DIR_MODE });
  }
  const seeded = chooseCurrent(layout, facts, unfit);
  if (!seeded.ok) return seeded;
  const { slot: currentSlot, seedSource } = seeded.value;
  if (seedSource !== null) {
    actions.push({
      kind: 'seed-slot',
      slot: currentSlot,
      source: seedSource,
      target: slotPath(layout, currentSlot),
      mode: BINARY_MODE,
    });
  }
  if (linkedSlot(facts, 'current') !== currentSlot) {
    actions.push(pointLink(layout, 'current', slotPath(layout, currentSlot)));
  }
  const lastGood = linkedSlot(facts, 'lastGood');
  const lastGoodSlot = lastGood ?? currentSlot;
  if (lastGood === null) actions.push(pointLink(layout, 'lastGood', slotPath(layout, currentSlot)));
  if (!entryLeadsToCurrent(layout, facts)) actions.push(pointLink(layout, 'entry', layout.current));
  return ok({ actions, currentSlot, lastGoodSlot });
}

/** A link action whose stored text is relative, so it resolves inside a `--root` sandbox too. */
export function pointLink(layout: SlotLayout, role: LinkRole, target: string): LayoutAction {
  const link = layout[role];
  return { kind: 'point-link', role, link, text: relativePath(dirnamePath(link), target) };
}

interface CurrentChoice {
  readonly slot: SlotName;
  /** The file to copy into `slot` first, or `null` when the slot already holds the binary. */
  readonly seedSource: string | null;
}

/**
 * Which slot current will name. A current that already names an executable slot is kept. A
 * current that resolves to an executable file outside the slots (the agent runs from a legacy
 * path) is adopted by copying that file into a slot — blue, unless last-good names blue or blue
 * is broken. Otherwise the first fit executable of last-good's slot, blue, green and the legacy
 * entry file is used, the legacy file again by copying it: last-good first, because it is the
 * binary known to have worked; an unfit one (quarantined, or older than what was committed)
 * never. A broken slot (a directory, a FIFO, a symlink) is neither used nor copied into.
 */
function chooseCurrent(layout: SlotLayout, facts: LayoutFacts, unfit: ReadonlySet<SeedSource>): Result<CurrentChoice> {
  const managed = linkedSlot(facts, 'current');
  if (managed !== null) return ok({ slot: managed, seedSource: null });
  const lastGood = linkedSlot(facts, 'lastGood');
  const seedSlot = chooseSeedSlot(facts, lastGood);
  const outside = outsideTarget(layout, facts);
  const outsideFit = outside !== null && !unfit.has('outside');
  if (outsideFit && seedSlot !== null) return ok({ slot: seedSlot, seedSource: outside });
  const slots = lastGood === null ? (['blue', 'green'] as const) : [lastGood, otherSlot(lastGood)];
  for (const slot of slots) {
    if (slotFileExecutable(facts, slot) && !unfit.has(slot)) return ok({ slot, seedSource: null });
  }
  const legacy = executableTarget(facts.entry, layout.entry);
  const legacyFit = legacy !== null && !entryLeadsToCurrent(layout, facts) && !unfit.has('entry');
  if (legacyFit && seedSlot !== null) return ok({ slot: seedSlot, seedSource: legacy });
  // A binary to copy, but no slot it may be copied into: the broken slot is what to fix.
  const broken = (['blue', 'green'] as const).find((slot) => isBrokenSlot(facts, slot));
  if ((outsideFit || legacyFit) && broken !== undefined) return fail('E_LAYOUT', describeBrokenSlot(facts, broken));
  const refused =
    unfit.size > 0 ? ' (the binaries found are quarantined or older than the highest committed version)' : '';
  return fail(
    'E_LAYOUT',
    `no runnable agent binary found: neither ${layout.current}, the slots, nor ${layout.entry} leads to an executable file fit to run${refused}`,
  );
}

/**
 * The executable current resolves to when it lies outside the slots. Through a symlinked slot
 * current may reach the other slot's own file: that one is used as a slot, not copied.
 */
function outsideTarget(layout: SlotLayout, facts: LayoutFacts): string | null {
  const resolved = executableTarget(facts.current, layout.current);
  return resolved !== null && slotAt(facts.canonical, resolved) === null ? resolved : null;
}

/**
 * The slot a binary from outside the slots is copied into: one last-good does not name, so a
 * usable last-good binary is never overwritten, and one that is not broken — blue first.
 */
function chooseSeedSlot(facts: LayoutFacts, lastGood: SlotName | null): SlotName | null {
  const free = lastGood === null ? (['blue', 'green'] as const) : [otherSlot(lastGood)];
  return free.find((slot) => !isBrokenSlot(facts, slot)) ?? null;
}

/** True when the entry is a symlink whose stored text names the current link itself. */
function entryLeadsToCurrent(layout: SlotLayout, facts: LayoutFacts): boolean {
  const entry = facts.entry;
  if (entry.kind !== 'symlink') return false;
  const target = resolveLinkTarget(layout.entry, entry.text);
  return target === layout.current || target === facts.canonical.current;
}
