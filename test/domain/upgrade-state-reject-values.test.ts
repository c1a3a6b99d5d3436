/** Rejected state texts, part two: slot digests and versions, the quarantine, the mark, the size. */
import { describe, expect, it } from 'vitest';
import {
  parseUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
  STATE_TEXT_MAX_BYTES,
} from '../../src/domain/node/record/upgrade-state.js';
import { A, B, digest, empty, mutate } from './upgrade-state-fixtures.js';

describe('parseUpgradeState rejects with E_STATE', () => {
  const cases: readonly [string, string][] = [
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
});
