import { describe, expect, it } from 'vitest';
import {
  emptyUpgradeState,
  parseUpgradeState,
  serializeUpgradeState,
  STATE_TEXT_MAX_BYTES,
  withCommittedVersion,
  withQuarantined,
  withSlotInfo,
  type UpgradeState,
} from '../../src/domain/node/record/upgrade-state.js';
import { A, B, empty, populated, samples } from './upgrade-state-fixtures.js';

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
