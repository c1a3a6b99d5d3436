import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import {
  committedVersion,
  emptyUpgradeState,
  isQuarantined,
  isStoredVersionText,
  parseUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
  STATE_TEXT_MAX_BYTES,
  withCommittedVersion,
  withQuarantined,
  withSlotInfo,
  type SlotInfo,
  type UpgradeState,
} from '../../src/domain/node/record/upgrade-state.js';
import { compareVersions, formatVersion, parseVersion, type Version } from '../../src/domain/common/version.js';

function parseOrThrow(text: string): Version {
  const result = parseVersion(text);
  if (!result.ok) throw new Error(`test setup: ${text}`);
  return result.value;
}

const digest = (n: number): Sha256 => n.toString(16).padStart(64, '0') as Sha256;
const A = digest(0xa);
const B = digest(0xb);
const C = digest(0xc);

const empty = emptyUpgradeState();
const populated: UpgradeState = withCommittedVersion(
  withQuarantined(
    withQuarantined(
      withSlotInfo(withSlotInfo(empty, 'blue', { digest: A, version: 'v1.2.3' }), 'green', {
        digest: B,
        version: '1.3.0-rc.1+build.7',
      }),
      C,
    ),
    B,
  ),
  '1.3.0-rc.1',
);
const full = Array.from({ length: QUARANTINE_MAX }, (_, i) => digest(0x100 + i)).reduce(withQuarantined, empty);

const samples: readonly [string, UpgradeState][] = [
  ['empty', empty],
  ['blue only, unknown version', withSlotInfo(empty, 'blue', { digest: A, version: null })],
  ['green only', withSlotInfo(empty, 'green', { digest: B, version: '0.0.1' })],
  ['populated', populated],
  ['full quarantine', full],
  ['only a committed version', withCommittedVersion(empty, '2.0.0')],
];

function mutate(change: (state: Record<string, any>) => void): string {
  const value = JSON.parse(serializeUpgradeState(populated)) as Record<string, unknown>;
  change(value);
  return JSON.stringify(value);
}

describe('emptyUpgradeState', () => {
  it('has no slots, no quarantine and no committed version', () => {
    expect(empty).toEqual({
      kind: 'AgentUpgradeState',
      schemaVersion: 1,
      slots: { blue: null, green: null },
      quarantine: [],
      highestCommittedVersion: null,
    });
  });

  it('returns a fresh value each time', () => {
    expect(emptyUpgradeState()).not.toBe(emptyUpgradeState());
  });
});

describe('serializeUpgradeState / parseUpgradeState', () => {
  it.each(samples)('%s: parse(serialize(s)) equals s', (_name, state) => {
    expect(parseUpgradeState(serializeUpgradeState(state))).toEqual({ ok: true, value: state });
  });

  it.each(samples)('%s: serialize(parse(text)) is the same text', (_name, state) => {
    const text = serializeUpgradeState(state);
    const parsed = parseUpgradeState(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeUpgradeState(parsed.value)).toBe(text);
  });

  it.each(samples)('%s: canonical text is byte-stable whatever the input key order', (_name, state) => {
    const canonical = serializeUpgradeState(state);
    const reversed = (value: unknown): unknown => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([k, v]) => [k, reversed(v)]),
      );
    };
    const shuffled = JSON.stringify(reversed(JSON.parse(canonical)));
    expect(shuffled).not.toBe(canonical);
    const parsed = parseUpgradeState(shuffled);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeUpgradeState(parsed.value)).toBe(canonical);
    expect(serializeUpgradeState(reversed(state) as UpgradeState)).toBe(canonical);
  });

  it('writes the documented canonical form', () => {
    const state = withCommittedVersion(
      withQuarantined(withSlotInfo(empty, 'green', { digest: A, version: '1.0.0' }), B),
      '1.0.0',
    );
    expect(serializeUpgradeState(state)).toBe(
      [
        '{',
        '  "kind": "AgentUpgradeState",',
        '  "schemaVersion": 1,',
        '  "slots": {',
        '    "blue": null,',
        '    "green": {',
        `      "digest": "${A}",`,
        '      "version": "1.0.0"',
        '    }',
        '  },',
        '  "quarantine": [',
        `    "${B}"`,
        '  ],',
        '  "highestCommittedVersion": "1.0.0"',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('accepts text padded up to the size limit', () => {
    const text = serializeUpgradeState(populated);
    expect(parseUpgradeState(`${text}${' '.repeat(STATE_TEXT_MAX_BYTES - text.length)}`).ok).toBe(true);
  });
});

describe('parseUpgradeState rejects with E_STATE', () => {
  const cases: readonly [string, string][] = [
    ['empty text', ''],
    ['invalid JSON', '{"kind":"AgentUpgradeState"'],
    ['trailing garbage', `${serializeUpgradeState(empty)},`],
    ['null', 'null'],
    ['array', '[]'],
    ['string', '"AgentUpgradeState"'],
    ['number', '1'],
    ['empty object', '{}'],
    [
      'upgrade record kind',
      mutate((s) => {
        s.kind = 'AgentUpgradeRecord';
      }),
    ],
    [
      'missing kind',
      mutate((s) => {
        delete s.kind;
      }),
    ],
    [
      'schemaVersion 2',
      mutate((s) => {
        s.schemaVersion = 2;
      }),
    ],
    [
      'schemaVersion 0',
      mutate((s) => {
        s.schemaVersion = 0;
      }),
    ],
    [
      'schemaVersion string',
      mutate((s) => {
        s.schemaVersion = '1';
      }),
    ],
    [
      'missing schemaVersion',
      mutate((s) => {
        delete s.schemaVersion;
      }),
    ],
    [
      'missing slots',
      mutate((s) => {
        delete s.slots;
      }),
    ],
    [
      'missing quarantine',
      mutate((s) => {
        delete s.quarantine;
      }),
    ],
    [
      'missing highestCommittedVersion',
      mutate((s) => {
        delete s.highestCommittedVersion;
      }),
    ],
    [
      'missing slots.blue',
      mutate((s) => {
        delete s.slots.blue;
      }),
    ],
    [
      'missing slots.green',
      mutate((s) => {
        delete s.slots.green;
      }),
    ],
    [
      'missing slot digest',
      mutate((s) => {
        delete s.slots.blue.digest;
      }),
    ],
    [
      'missing slot version',
      mutate((s) => {
        delete s.slots.green.version;
      }),
    ],
    [
      'unknown top-level key',
      mutate((s) => {
        s.lastUpgrade = null;
      }),
    ],
    ['unknown top-level key __proto__', serializeUpgradeState(empty).replace('{', '{"__proto__":null,')],
    [
      'unknown slot name',
      mutate((s) => {
        s.slots.red = null;
      }),
    ],
    [
      'unknown key in a slot',
      mutate((s) => {
        s.slots.blue.installedAt = '2024-01-01';
      }),
    ],
    [
      'slots null',
      mutate((s) => {
        s.slots = null;
      }),
    ],
    [
      'slots array',
      mutate((s) => {
        s.slots = [null, null];
      }),
    ],
    [
      'slot string',
      mutate((s) => {
        s.slots.blue = A;
      }),
    ],
    [
      'slot array',
      mutate((s) => {
        s.slots.blue = [A, '1.0.0'];
      }),
    ],
    [
      'slot false',
      mutate((s) => {
        s.slots.green = false;
      }),
    ],
    [
      'slot digest null',
      mutate((s) => {
        s.slots.blue.digest = null;
      }),
    ],
    [
      'slot digest upper-case',
      mutate((s) => {
        s.slots.blue.digest = A.toUpperCase();
      }),
    ],
    [
      'slot digest prefixed',
      mutate((s) => {
        s.slots.blue.digest = `sha256:${A}`;
      }),
    ],
    [
      'slot digest short',
      mutate((s) => {
        s.slots.blue.digest = A.slice(1);
      }),
    ],
    [
      'slot version number',
      mutate((s) => {
        s.slots.blue.version = 1;
      }),
    ],
    [
      'slot version invalid',
      mutate((s) => {
        s.slots.blue.version = 'latest';
      }),
    ],
    [
      'slot version empty',
      mutate((s) => {
        s.slots.blue.version = '';
      }),
    ],
    [
      'slot version untrimmed',
      mutate((s) => {
        s.slots.blue.version = ' 1.2.3';
      }),
    ],
    [
      'slot version with newline',
      mutate((s) => {
        s.slots.blue.version = '1.2.3\n';
      }),
    ],
    [
      'slot version leading zero',
      mutate((s) => {
        s.slots.blue.version = '1.02.3';
      }),
    ],
    [
      'slot version too long',
      mutate((s) => {
        s.slots.blue.version = `1.0.0-${'a'.repeat(64)}`;
      }),
    ],
    [
      'quarantine null',
      mutate((s) => {
        s.quarantine = null;
      }),
    ],
    [
      'quarantine object',
      mutate((s) => {
        s.quarantine = { 0: A };
      }),
    ],
    [
      'quarantine string',
      mutate((s) => {
        s.quarantine = A;
      }),
    ],
    [
      'quarantine entry null',
      mutate((s) => {
        s.quarantine = [null];
      }),
    ],
    [
      'quarantine entry upper-case',
      mutate((s) => {
        s.quarantine = [A.toUpperCase()];
      }),
    ],
    [
      'quarantine entry prefixed',
      mutate((s) => {
        s.quarantine = [`sha256:${A}`];
      }),
    ],
    [
      'quarantine entry number',
      mutate((s) => {
        s.quarantine = [1];
      }),
    ],
    [
      'quarantine duplicate',
      mutate((s) => {
        s.quarantine = [A, B, A];
      }),
    ],
    [
      'quarantine over the bound',
      mutate((s) => {
        s.quarantine = Array.from({ length: QUARANTINE_MAX + 1 }, (_, i) => digest(i));
      }),
    ],
    [
      'highestCommittedVersion number',
      mutate((s) => {
        s.highestCommittedVersion = 1;
      }),
    ],
    [
      'highestCommittedVersion invalid',
      mutate((s) => {
        s.highestCommittedVersion = '1.2';
      }),
    ],
    [
      'highestCommittedVersion empty',
      mutate((s) => {
        s.highestCommittedVersion = '';
      }),
    ],
    [
      'highestCommittedVersion untrimmed',
      mutate((s) => {
        s.highestCommittedVersion = '1.2.3 ';
      }),
    ],
    [
      'highestCommittedVersion object',
      mutate((s) => {
        s.highestCommittedVersion = { major: 1, minor: 2, patch: 3 };
      }),
    ],
    ['over-size text', `${serializeUpgradeState(empty)}${' '.repeat(STATE_TEXT_MAX_BYTES)}`],
  ];

  it.each(cases)('%s', (_name, text) => {
    const result = parseUpgradeState(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_STATE');
  });

  it('the base object of the rejection cases parses', () => {
    expect(parseUpgradeState(mutate(() => undefined)).ok).toBe(true);
  });

  it.each([
    [
      'a full quarantine',
      mutate((s) => {
        s.quarantine = Array.from({ length: QUARANTINE_MAX }, (_, i) => digest(i));
      }),
    ],
    [
      'a v-prefixed version',
      mutate((s) => {
        s.slots.blue.version = 'v10.0.0';
      }),
    ],
    [
      'a version with build metadata',
      mutate((s) => {
        s.highestCommittedVersion = '1.0.0+sha.abc';
      }),
    ],
    [
      'null slots',
      mutate((s) => {
        s.slots = { green: null, blue: null };
      }),
    ],
    [
      'a null version',
      mutate((s) => {
        s.slots.green.version = null;
      }),
    ],
  ])('accepts %s', (_name, text) => {
    expect(parseUpgradeState(text).ok).toBe(true);
  });
});

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
