/** Rejected state texts, part one: the document, its kind and version, keys and the slots object. */
import { describe, expect, it } from 'vitest';
import {
  parseUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
} from '../../src/domain/node/record/upgrade-state.js';
import { A, digest, empty, mutate } from './upgrade-state-fixtures.js';

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
