import { fail, failure, ok, type Failure, type Result } from '../../common/failure.js';
import { isPathInside, resolveLinkTarget } from './posix-path.js';
import { slotAt, type CanonicalPaths, type SlotLayout } from './slot-layout.js';
import type { SlotName } from './slot.js';

/**
 * What the host shows, observed by the app and handed to the domain. Decisions are made from
 * these facts alone, so re-observing after a crash is all recovery needs.
 */
export type ResolvedFact =
  | { readonly kind: 'file'; readonly path: string; readonly executable: boolean }
  | { readonly kind: 'not-file'; readonly path: string }
  | { readonly kind: 'dangling' }
  | { readonly kind: 'loop' };

export type PathFact =
  | { readonly kind: 'missing' }
  | { readonly kind: 'file'; readonly uid: number; readonly executable: boolean }
  | { readonly kind: 'symlink'; readonly uid: number; readonly text: string; readonly resolved: ResolvedFact }
  | { readonly kind: 'directory'; readonly uid: number }
  | { readonly kind: 'other'; readonly uid: number };

/** The layout's paths whose facts the decisions read (and that must be root's on a production host). */
export const OBSERVED_ROLES = ['slotDir', 'entry', 'blue', 'green', 'current', 'lastGood', 'record', 'state'] as const;
export type ObservedRole = (typeof OBSERVED_ROLES)[number];

export interface LayoutFacts extends Readonly<Record<ObservedRole, PathFact>> {
  readonly canonical: CanonicalPaths;
  /** Temp entries (`.<name>.tmp-*`) an interrupted atomic write left next to a layout file. */
  readonly staleTemps: readonly string[];
}

/** The name prefix atomic writes give their temp entries next to `path` (see the FileSystem port). */
export function tempPrefixFor(basename: string): string {
  return `.${basename}.tmp-`;
}

/** The real path a fact leads to when it names an executable regular file, else `null`. */
export function executableTarget(fact: PathFact, ownPath: string): string | null {
  if (fact.kind === 'file') return fact.executable ? ownPath : null;
  if (fact.kind === 'symlink' && fact.resolved.kind === 'file' && fact.resolved.executable) return fact.resolved.path;
  return null;
}

/**
 * The slot a link names, when its own text names a slot directly and that slot is an executable
 * file. A link that reaches a slot only through another link (last-good → current → blue) does
 * not count: it would follow current to the next candidate after a switch.
 */
export function linkedSlot(facts: LayoutFacts, role: 'current' | 'lastGood'): SlotName | null {
  const fact = facts[role];
  if (fact.kind !== 'symlink' || fact.resolved.kind !== 'file' || !fact.resolved.executable) return null;
  const named = namedSlot(facts, role);
  return named !== null && named === slotAt(facts.canonical, fact.resolved.path) ? named : null;
}

/** The slot a link's own text names, whatever that slot holds (nothing, a directory, …). */
export function namedSlot(facts: LayoutFacts, role: 'current' | 'lastGood'): SlotName | null {
  const fact = facts[role];
  if (fact.kind !== 'symlink') return null;
  return slotAt(facts.canonical, resolveLinkTarget(facts.canonical[role], fact.text));
}

/**
 * A slot that exists but is not a regular file — a directory, a FIFO or device, a symlink (an
 * alias of another file) — is broken: nothing runs it, links to it or is installed into it. It
 * refuses only what would (docs/operations.md#broken-slots), never the repair of current from
 * the other slot.
 */
export function isBrokenSlot(facts: LayoutFacts, slot: SlotName): boolean {
  const kind = facts[slot].kind;
  return kind !== 'missing' && kind !== 'file';
}

/** Why `slot` is broken, as a command reports it or refuses with it (`E_LAYOUT`). */
export function describeBrokenSlot(facts: LayoutFacts, slot: SlotName): string {
  return `the ${slot} slot ${facts.canonical[slot]} must be a regular file, found ${describeKind(facts[slot])}; nothing is installed into it until it is removed`;
}

/** Every broken slot as a reported problem, blue first. */
export function brokenSlotProblems(facts: LayoutFacts): readonly Failure[] {
  return (['blue', 'green'] as const)
    .filter((slot) => isBrokenSlot(facts, slot))
    .map((slot) => failure('E_LAYOUT', describeBrokenSlot(facts, slot)));
}

export function slotFileExecutable(facts: LayoutFacts, slot: SlotName): boolean {
  const fact = facts[slot];
  return fact.kind === 'file' && fact.executable;
}

/**
 * Refuses a host whose entries have the wrong type for their role: a directory where a link or
 * file must be, a regular file where a link must be, or a special file anywhere. Nothing may be
 * changed on such a host. A broken slot is not refused here (`isBrokenSlot`): the other slot
 * may still hold the binary current must be repaired from.
 */
export function checkLayoutShape(layout: SlotLayout, facts: LayoutFacts): Result<LayoutFacts> {
  if (facts.slotDir.kind !== 'missing' && facts.slotDir.kind !== 'directory') {
    return fail('E_LAYOUT', `the slot directory ${layout.slotDir} exists and is not a directory`);
  }
  for (const link of ['current', 'lastGood'] as const) {
    const fact = facts[link];
    if (fact.kind !== 'missing' && fact.kind !== 'symlink') {
      return fail(
        'E_LAYOUT',
        `the ${link === 'current' ? 'current' : 'last-good'} link ${layout[link]} must be a symlink, found ${describeKind(fact)}`,
      );
    }
  }
  if (facts.entry.kind === 'directory' || facts.entry.kind === 'other') {
    return fail(
      'E_LAYOUT',
      `the compatibility entry ${layout.entry} must be a regular file or a symlink, found ${describeKind(facts.entry)}`,
    );
  }
  for (const role of ['record', 'state'] as const) {
    const fact = facts[role];
    if (fact.kind !== 'missing' && fact.kind !== 'file') {
      return fail(
        'E_LAYOUT',
        `${role === 'record' ? 'the upgrade record' : 'the upgrade state file'} ${layout[role]} must be a regular file, found ${describeKind(fact)}`,
      );
    }
  }
  return ok(facts);
}

/**
 * With production paths every existing entry must be owned by root (docs/security.md#the-host), so
 * that no other user can swap a binary the root-run agent will execute.
 */
export function checkRootOwnership(layout: SlotLayout, facts: LayoutFacts): Result<LayoutFacts> {
  for (const role of OBSERVED_ROLES) {
    const fact = facts[role];
    if (fact.kind !== 'missing' && fact.uid !== 0) {
      return fail('E_LAYOUT', `${layout[role]} is not owned by root (uid ${fact.uid})`);
    }
  }
  return ok(facts);
}

export function describeKind(fact: PathFact): string {
  switch (fact.kind) {
    case 'missing':
      return 'nothing';
    case 'file':
      return 'a regular file';
    case 'symlink':
      return 'a symlink';
    case 'directory':
      return 'a directory';
    case 'other':
      return 'a special file';
  }
}

/**
 * With a sandbox root, every link of the layout must resolve inside it: a current, last-good or
 * entry that leads to a host file outside (by an absolute target or by climbing with `..`)
 * would make a sandbox command copy or run the host's binary.
 */
export function checkTargetsInsideRoot(
  layout: SlotLayout,
  facts: LayoutFacts,
  canonicalRoot: string,
): Result<LayoutFacts> {
  if (layout.root === '/') return ok(facts);
  for (const role of ['entry', 'current', 'lastGood'] as const) {
    const fact = facts[role];
    if (fact.kind !== 'symlink') continue;
    const resolved = fact.resolved.kind === 'file' || fact.resolved.kind === 'not-file' ? fact.resolved.path : null;
    if (resolved !== null && !isPathInside(canonicalRoot, resolved)) {
      return fail('E_LAYOUT', `${layout[role]} resolves to ${resolved}, outside the root ${layout.root}`);
    }
  }
  return ok(facts);
}
