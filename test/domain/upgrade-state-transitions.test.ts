import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  committedVersion,
  isQuarantined,
  isStoredVersionText,
  parseUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
  withCommittedVersion,
  withQuarantined,
  withSlotInfo,
  type SlotInfo,
  type UpgradeState,
} from '../../src/domain/node/record/upgrade-state.js';
import { compareVersions, formatVersion, parseVersion, type Version } from '../../src/domain/common/version.js';
import { A, B, C, digest, empty, full, populated } from './upgrade-state-fixtures.js';

function parseOrThrow(text: string): Version {
  const result = parseVersion(text);
  if (!result.ok) throw new Error(`test setup: ${text}`);
  return result.value;
}

describe('withSlotInfo', () => {
  it.each<[string, UpgradeState, SlotName, SlotInfo | null, UpgradeState['slots']]>([
    [
      'sets blue',
      empty,
      'blue',
      { digest: A, version: '1.0.0' },
      { blue: { digest: A, version: '1.0.0' }, green: null },
    ],
    ['sets green', empty, 'green', { digest: B, version: null }, { blue: null, green: { digest: B, version: null } }],
    [
      'replaces blue, keeps green',
      populated,
      'blue',
      { digest: C, version: '2.0.0' },
      { blue: { digest: C, version: '2.0.0' }, green: populated.slots.green },
    ],
    ['clears green, keeps blue', populated, 'green', null, { blue: populated.slots.blue, green: null }],
    [
      'trims the version text',
      empty,
      'blue',
      { digest: A, version: ' v1.0.0\n' },
      { blue: { digest: A, version: 'v1.0.0' }, green: null },
    ],
  ])('%s', (_name, start, slot, info, slots) => {
    const next = withSlotInfo(start, slot, info);
    expect(next.slots).toEqual(slots);
    expect({ ...next, slots: start.slots }).toEqual(start);
    expect(parseUpgradeState(serializeUpgradeState(next))).toEqual({ ok: true, value: next });
  });

  it('does not modify its input', () => {
    const before = serializeUpgradeState(populated);
    withSlotInfo(populated, 'blue', null);
    expect(serializeUpgradeState(populated)).toBe(before);
  });

  it.each<[string, SlotInfo]>([
    ['invalid version', { digest: A, version: 'latest' }],
    ['empty version', { digest: A, version: '' }],
    ['upper-case digest', { digest: A.toUpperCase() as Sha256, version: null }],
    ['short digest', { digest: A.slice(1) as Sha256, version: null }],
  ])('throws an invariant violation for %s', (_name, info) => {
    expect(() => withSlotInfo(empty, 'blue', info)).toThrow(InvariantViolation);
  });
});

describe('withQuarantined / isQuarantined', () => {
  it.each<[string, UpgradeState, Sha256, readonly Sha256[]]>([
    ['first digest', empty, A, [A]],
    ['appends newest last', withQuarantined(empty, A), B, [A, B]],
    ['idempotent for the newest', withQuarantined(empty, A), A, [A]],
    ['idempotent for an older entry, keeping its place', withQuarantined(withQuarantined(empty, A), B), A, [A, B]],
    [
      'fills up to the bound',
      Array.from({ length: QUARANTINE_MAX - 1 }, (_, i) => digest(0x100 + i)).reduce(withQuarantined, empty),
      A,
      [...Array.from({ length: QUARANTINE_MAX - 1 }, (_, i) => digest(0x100 + i)), A],
    ],
    ['drops the oldest when full', full, A, [...full.quarantine.slice(1), A]],
    ['idempotent when full', full, digest(0x100), full.quarantine],
  ])('%s', (_name, start, added, expected) => {
    const next = withQuarantined(start, added);
    expect(next.quarantine).toEqual(expected);
    expect(next.quarantine.length).toBeLessThanOrEqual(QUARANTINE_MAX);
    expect(isQuarantined(next, added)).toBe(true);
    expect({ ...next, quarantine: start.quarantine }).toEqual(start);
    expect(parseUpgradeState(serializeUpgradeState(next)).ok).toBe(true);
  });

  it('adding the same digest twice equals adding it once', () => {
    expect(withQuarantined(withQuarantined(populated, A), A)).toEqual(withQuarantined(populated, A));
  });

  it('keeps the newest QUARANTINE_MAX digests, oldest first, whatever the count', () => {
    const all = Array.from({ length: 3 * QUARANTINE_MAX + 5 }, (_, i) => digest(0x1000 + i));
    let state = empty;
    for (const [index, added] of all.entries()) {
      state = withQuarantined(state, added);
      expect(state.quarantine).toEqual(all.slice(Math.max(0, index + 1 - QUARANTINE_MAX), index + 1));
    }
    expect(isQuarantined(state, all[0]!)).toBe(false);
    expect(isQuarantined(state, all.at(-1)!)).toBe(true);
  });

  it('does not modify its input', () => {
    const before = serializeUpgradeState(full);
    withQuarantined(full, A);
    expect(serializeUpgradeState(full)).toBe(before);
  });

  it.each<[string, UpgradeState, Sha256, boolean]>([
    ['empty', empty, A, false],
    ['present', populated, B, true],
    ['present, oldest', populated, C, true],
    ['absent', populated, A, false],
    ['dropped from a full list', withQuarantined(full, A), digest(0x100), false],
  ])('isQuarantined: %s', (_name, state, candidate, expected) => {
    expect(isQuarantined(state, candidate)).toBe(expected);
  });

  it.each(['', A.toUpperCase(), `sha256:${A}`])(
    'throws an invariant violation for the non-canonical digest %j',
    (text) => {
      expect(() => withQuarantined(empty, text as Sha256)).toThrow(InvariantViolation);
    },
  );
});

describe('withCommittedVersion', () => {
  it.each<[string | null, string, string]>([
    // mark before, committed, mark after
    [null, '1.0.0', '1.0.0'],
    [null, 'v0.1.0-alpha', 'v0.1.0-alpha'],
    [null, ' 1.2.3\n', '1.2.3'],
    ['1.0.0', '1.0.1', '1.0.1'],
    ['1.0.1', '1.0.0', '1.0.1'],
    ['1.9.0', '1.10.0', '1.10.0'],
    ['1.10.0', '1.9.0', '1.10.0'],
    ['2.0.0', '10.0.0', '10.0.0'],
    ['1.0.0-rc.1', '1.0.0', '1.0.0'],
    ['1.0.0', '1.0.0-rc.1', '1.0.0'],
    ['1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-beta.11'],
    ['1.0.0-beta.11', '1.0.0-beta.2', '1.0.0-beta.11'],
    ['1.0.0-alpha.beta', '1.0.0-alpha.1', '1.0.0-alpha.beta'],
    ['1.2.3', '1.2.3', '1.2.3'],
    ['1.2.3', 'v1.2.3', '1.2.3'],
    ['1.2.3+build.1', '1.2.3+build.2', '1.2.3+build.1'],
    ['v3.0.0', '2.9.9', 'v3.0.0'],
  ])('mark %j, commit %j → %j', (before, committed, after) => {
    const start = before === null ? empty : withCommittedVersion(empty, before);
    const next = withCommittedVersion(start, committed);
    expect(next.highestCommittedVersion).toBe(after);
    expect({ ...next, highestCommittedVersion: start.highestCommittedVersion }).toEqual(start);
    if (next.highestCommittedVersion === start.highestCommittedVersion) expect(next).toBe(start);
  });

  it('never lowers the mark over any commit sequence', () => {
    const sequence = [
      '1.0.0',
      '0.9.0',
      '1.0.0-rc.1',
      '1.1.0',
      '1.0.5',
      'v1.1.0',
      '2.0.0-alpha',
      '1.99.99',
      '2.0.0',
      '2.0.0-rc.9',
    ];
    let state = empty;
    for (const text of sequence) {
      const before = committedVersion(state);
      state = withCommittedVersion(state, text);
      const after = committedVersion(state);
      if (after === null) throw new Error('a commit must set the mark');
      expect(compareVersions(after, parseOrThrow(text))).toBeGreaterThanOrEqual(0);
      if (before !== null) expect(compareVersions(after, before)).toBeGreaterThanOrEqual(0);
    }
    expect(state.highestCommittedVersion).toBe('2.0.0');
  });

  it.each(['', 'latest', '1.2', '01.2.3', `1.0.0-${'a'.repeat(64)}`])(
    'throws an invariant violation for %j',
    (text) => {
      expect(() => withCommittedVersion(empty, text)).toThrow(InvariantViolation);
      expect(() => withCommittedVersion(withCommittedVersion(empty, '1.0.0'), text)).toThrow(InvariantViolation);
    },
  );

  it.each<[string | null, string | null]>([
    [null, null],
    ['v1.2.3-rc.1+b', '1.2.3-rc.1+b'],
  ])('committedVersion of mark %j formats as %j', (mark, formatted) => {
    const state = mark === null ? empty : withCommittedVersion(empty, mark);
    const version = committedVersion(state);
    expect(version === null ? null : formatVersion(version)).toBe(formatted);
  });
});

describe('isStoredVersionText', () => {
  it.each<[unknown, boolean]>([
    ['1.2.3', true],
    ['v1.2.3', true],
    ['1.2.3-rc.1+b.2', true],
    [' 1.2.3', false],
    ['1.2.3\n', false],
    ['', false],
    ['1.2', false],
    [123, false],
    [null, false],
  ])('%j → %s', (value, expected) => {
    expect(isStoredVersionText(value)).toBe(expected);
  });
});
