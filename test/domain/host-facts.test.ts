import { describe, expect, it } from 'vitest';
import {
  brokenSlotProblems,
  checkLayoutShape,
  checkRootOwnership,
  describeKind,
  executableTarget,
  isBrokenSlot,
  linkedSlot,
  slotFileExecutable,
  tempPrefixFor,
  type LayoutFacts,
  type PathFact,
  type ResolvedFact,
} from '../../src/domain/node/layout/host-facts.js';
import { identity } from '../../src/domain/node/layout/slot-layout.js';
import {
  dirFact,
  fileFact,
  flexLayout,
  linkFact,
  managedFacts,
  missingFact,
  otherFact,
  TEXT,
} from './layout-fixtures.js';

const layout = flexLayout();
type Role = Exclude<keyof LayoutFacts, 'canonical' | 'staleTemps'>;
const ROLES: readonly Role[] = ['slotDir', 'entry', 'blue', 'green', 'current', 'lastGood', 'record', 'state'];

const toBlue: ResolvedFact = { kind: 'file', path: layout.blue, executable: true };
const toGreen: ResolvedFact = { kind: 'file', path: layout.green, executable: true };
const toOutside: ResolvedFact = { kind: 'file', path: '/opt/agent/bin', executable: true };
const toNonExecutable: ResolvedFact = { kind: 'file', path: layout.blue, executable: false };
const toDirectory: ResolvedFact = { kind: 'not-file', path: layout.slotDir };
const dangling: ResolvedFact = { kind: 'dangling' };
const loop: ResolvedFact = { kind: 'loop' };

function allMissing(): LayoutFacts {
  const m = missingFact();
  return {
    canonical: identity(layout),
    slotDir: m,
    entry: m,
    blue: m,
    green: m,
    current: m,
    lastGood: m,
    record: m,
    state: m,
    staleTemps: [],
  };
}

function codeOf<T>(result: { ok: true; value: T } | { ok: false; failure: { code: string } }): string | null {
  return result.ok ? null : result.failure.code;
}

describe('checkLayoutShape: refused shapes', () => {
  it.each([
    ['slotDir', 'a regular file', fileFact(false)],
    ['slotDir', 'an executable file', fileFact(true)],
    ['slotDir', 'a special file', otherFact()],
    ['slotDir', 'a symlink to a directory', linkFact('/opt/slots', { kind: 'not-file', path: '/opt/slots' })],
    ['current', 'a regular executable file', fileFact(true)],
    ['current', 'a regular non-executable file', fileFact(false)],
    ['current', 'a directory', dirFact()],
    ['current', 'a special file', otherFact()],
    ['lastGood', 'a regular executable file', fileFact(true)],
    ['lastGood', 'a regular non-executable file', fileFact(false)],
    ['lastGood', 'a directory', dirFact()],
    ['lastGood', 'a special file', otherFact()],
    ['entry', 'a directory', dirFact()],
    ['entry', 'a special file', otherFact()],
    ['record', 'a directory', dirFact()],
    ['record', 'a symlink', linkFact('/tmp/evil', { kind: 'file', path: '/tmp/evil', executable: false })],
    ['record', 'a special file', otherFact()],
    ['state', 'a directory', dirFact()],
    ['state', 'a symlink', linkFact('/tmp/evil', dangling)],
    ['state', 'a special file', otherFact()],
  ] as const)('%s is %s → E_LAYOUT', (role: Role, _label, fact: PathFact) => {
    expect(codeOf(checkLayoutShape(layout, managedFacts(layout, { [role]: fact })))).toBe('E_LAYOUT');
  });
});

describe('broken slots: refused by what would use them, not by the shape check', () => {
  it.each([
    ['blue', 'a directory', dirFact()],
    ['blue', 'a symlinked slot (alias of green)', linkFact(TEXT.green, toGreen)],
    ['blue', 'a symlink to an outside executable', linkFact('/opt/agent/bin', toOutside)],
    ['blue', 'a dangling symlink', linkFact('nowhere', dangling)],
    ['blue', 'a special file', otherFact()],
    ['green', 'a directory', dirFact()],
    ['green', 'a symlinked slot (alias of blue)', linkFact(TEXT.blue, toBlue)],
    ['green', 'a special file', otherFact()],
  ] as const)('%s is %s: broken, reported as E_LAYOUT, and the shape check passes', (slot, _label, fact) => {
    const facts = managedFacts(layout, { [slot]: fact });
    expect({
      shape: checkLayoutShape(layout, facts).ok,
      broken: isBrokenSlot(facts, slot),
      problems: brokenSlotProblems(facts).map((problem) => problem.code),
    }).toEqual({ shape: true, broken: true, problems: ['E_LAYOUT'] });
  });

  it.each([
    ['missing', missingFact()],
    ['an executable file', fileFact(true)],
    ['a non-executable file', fileFact(false)],
  ])('a slot that is %s is not broken', (_label, fact) => {
    const facts = managedFacts(layout, { blue: fact, green: fact });
    expect({ blue: isBrokenSlot(facts, 'blue'), problems: brokenSlotProblems(facts) }).toEqual({
      blue: false,
      problems: [],
    });
  });
});

describe('checkLayoutShape: accepted shapes', () => {
  it.each([
    ['slotDir', 'missing', missingFact()],
    ['slotDir', 'a directory', dirFact()],
    ['blue', 'missing', missingFact()],
    ['blue', 'an executable file', fileFact(true)],
    ['blue', 'a non-executable file', fileFact(false)],
    ['green', 'missing', missingFact()],
    ['green', 'an executable file', fileFact(true)],
    ['green', 'a non-executable file', fileFact(false)],
    ['current', 'missing', missingFact()],
    ['current', 'a link to blue', linkFact(TEXT.blue, toBlue)],
    ['current', 'a link to green', linkFact(TEXT.green, toGreen)],
    ['current', 'a link to an outside executable', linkFact('/opt/agent/bin', toOutside)],
    ['current', 'a link to a non-executable', linkFact(TEXT.blue, toNonExecutable)],
    ['current', 'a link to a directory', linkFact('.', toDirectory)],
    ['current', 'a dangling link', linkFact(TEXT.blue, dangling)],
    ['current', 'a link loop', linkFact('aks-flex-node-last-good', loop)],
    ['lastGood', 'missing', missingFact()],
    ['lastGood', 'a dangling link', linkFact(TEXT.green, dangling)],
    ['lastGood', 'a link to blue', linkFact(TEXT.blue, toBlue)],
    ['entry', 'missing', missingFact()],
    ['entry', 'a legacy executable file', fileFact(true)],
    ['entry', 'a non-executable file', fileFact(false)],
    ['entry', 'a link to the current link', linkFact(TEXT.entryToCurrent, toBlue)],
    ['entry', 'a dangling link', linkFact(TEXT.entryToCurrent, dangling)],
    ['record', 'missing', missingFact()],
    ['record', 'a regular file', fileFact(false)],
    ['state', 'missing', missingFact()],
    ['state', 'a regular file', fileFact(false)],
  ] as const)('%s is %s → ok', (role: Role, _label, fact: PathFact) => {
    const facts = managedFacts(layout, { [role]: fact });
    expect(checkLayoutShape(layout, facts)).toEqual({ ok: true, value: facts });
  });

  it('a fresh host (everything missing) → ok', () => {
    const facts = allMissing();
    expect(checkLayoutShape(layout, facts).ok).toBe(true);
  });

  it('a legacy host (entry file only) → ok', () => {
    const facts: LayoutFacts = {
      ...managedFacts(layout),
      slotDir: missingFact(),
      blue: missingFact(),
      green: missingFact(),
      current: missingFact(),
      lastGood: missingFact(),
      entry: fileFact(true),
    };
    expect(checkLayoutShape(layout, facts).ok).toBe(true);
  });
});

describe('checkRootOwnership', () => {
  it.each(ROLES.flatMap((role) => [1, 1000, 65534].map((uid) => [role, uid] as const)))(
    '%s owned by uid %i → E_LAYOUT',
    (role, uid) => {
      const base = managedFacts(layout);
      const fact = base[role];
      if (fact.kind === 'missing') throw new Error('fixture must have the role present');
      const facts: LayoutFacts = { ...base, [role]: { ...fact, uid } };
      expect(codeOf(checkRootOwnership(layout, facts))).toBe('E_LAYOUT');
    },
  );

  it('every entry root-owned → ok', () => {
    const facts = managedFacts(layout);
    expect(checkRootOwnership(layout, facts)).toEqual({ ok: true, value: facts });
  });

  it.each(ROLES)('missing %s is ignored', (role) => {
    expect(checkRootOwnership(layout, managedFacts(layout, { [role]: missingFact() })).ok).toBe(true);
  });

  it('everything missing → ok', () => {
    const facts = allMissing();
    expect(checkRootOwnership(layout, facts).ok).toBe(true);
  });

  it('a link is judged by its own owner (lstat), not its target', () => {
    // The link is root's; what it resolves to is irrelevant here.
    const facts = managedFacts(layout, { current: linkFact(TEXT.blue, toBlue, 0), blue: fileFact(true, 0) });
    expect(checkRootOwnership(layout, facts).ok).toBe(true);
  });
});

describe('executableTarget', () => {
  const own = '/usr/local/bin/aks-flex-node';
  it.each([
    ['missing', missingFact(), null],
    ['an executable file', fileFact(true), own],
    ['a non-executable file', fileFact(false), null],
    ['a directory', dirFact(), null],
    ['a special file', otherFact(), null],
    ['a link to an executable', linkFact('x', toOutside), '/opt/agent/bin'],
    ['a link to a non-executable', linkFact('x', toNonExecutable), null],
    ['a link to a directory', linkFact('x', toDirectory), null],
    ['a dangling link', linkFact('x', dangling), null],
    ['a link loop', linkFact('x', loop), null],
  ] as const)('%s → %s', (_label, fact: PathFact, expected) => {
    expect(executableTarget(fact, own)).toBe(expected);
  });
});

describe('linkedSlot', () => {
  const aliasedCanonical = { ...identity(layout), blue: '/real/aks-flex-node-blue' };
  it.each([
    ['current → blue', 'current', linkFact(TEXT.blue, toBlue), identity(layout), 'blue'],
    ['current → green', 'current', linkFact(TEXT.green, toGreen), identity(layout), 'green'],
    ['current → outside executable', 'current', linkFact('/opt/agent/bin', toOutside), identity(layout), null],
    ['current → non-executable blue', 'current', linkFact(TEXT.blue, toNonExecutable), identity(layout), null],
    ['current dangling', 'current', linkFact(TEXT.blue, dangling), identity(layout), null],
    ['current loop', 'current', linkFact(TEXT.blue, loop), identity(layout), null],
    ['current → directory', 'current', linkFact('.', toDirectory), identity(layout), null],
    ['current missing', 'current', missingFact(), identity(layout), null],
    ['current a regular file at a slot path', 'current', fileFact(true), identity(layout), null],
    [
      'current → raw blue while blue is canonically elsewhere',
      'current',
      linkFact(TEXT.blue, toBlue),
      aliasedCanonical,
      null,
    ],
    [
      'current → canonical blue (the whole slot directory is reached through a symlink)',
      'current',
      linkFact(TEXT.blue, { kind: 'file', path: '/real/aks-flex-node-blue', executable: true }),
      { ...aliasedCanonical, current: '/real/aks-flex-node-current' },
      'blue',
    ],
    ['lastGood → green', 'lastGood', linkFact(TEXT.green, toGreen), identity(layout), 'green'],
    ['lastGood → blue', 'lastGood', linkFact(TEXT.blue, toBlue), identity(layout), 'blue'],
    ['lastGood dangling', 'lastGood', linkFact(TEXT.green, dangling), identity(layout), null],
    ['lastGood missing', 'lastGood', missingFact(), identity(layout), null],
  ] as const)('%s', (_label, role, fact: PathFact, canonical, expected) => {
    const facts: LayoutFacts = { ...managedFacts(layout), canonical, [role]: fact };
    expect(linkedSlot(facts, role)).toBe(expected);
  });
});

describe('slotFileExecutable', () => {
  it.each([
    [fileFact(true), true],
    [fileFact(false), false],
    [missingFact(), false],
    [dirFact(), false],
    [otherFact(), false],
    [linkFact(TEXT.green, toGreen), false],
  ] as const)('%j → %s', (fact: PathFact, expected) => {
    expect(slotFileExecutable(managedFacts(layout, { blue: fact }), 'blue')).toBe(expected);
    expect(slotFileExecutable(managedFacts(layout, { green: fact }), 'green')).toBe(expected);
  });
});

describe('describeKind', () => {
  it.each([missingFact(), fileFact(), dirFact(), otherFact(), linkFact('x', dangling)])(
    '%j has a description',
    (fact) => {
      expect(describeKind(fact)).not.toBe('');
    },
  );

  it('describes each kind differently', () => {
    const kinds = [missingFact(), fileFact(), dirFact(), otherFact(), linkFact('x', dangling)].map(describeKind);
    expect(new Set(kinds).size).toBe(kinds.length);
  });
});

describe('tempPrefixFor', () => {
  it.each([
    ['aks-flex-node-blue', '.aks-flex-node-blue.tmp-'],
    ['agent-upgrade-signal.json', '.agent-upgrade-signal.json.tmp-'],
    ['aks-flex-node', '.aks-flex-node.tmp-'],
  ])('%s → %s', (basename, expected) => {
    expect(tempPrefixFor(basename)).toBe(expected);
  });
});
