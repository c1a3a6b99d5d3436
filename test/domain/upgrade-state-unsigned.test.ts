// Signed releases: the state remembers which binaries an operator activated unsigned, and a file
// without any is the same as before signed releases.
import { describe, expect, it } from 'vitest';
import {
  isUnsignedAccepted,
  parseUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
  withSignedBinary,
  withUnsignedAccepted,
} from '../../src/domain/node/record/upgrade-state.js';
import { A, B, digest, empty, mutate, populated } from './upgrade-state-fixtures.js';

const codeOf = (text: string): string => {
  const parsed = parseUpgradeState(text);
  return parsed.ok ? 'ok' : parsed.failure.code;
};

describe('unsigned binaries an operator accepted', () => {
  it('are remembered once each, oldest dropped beyond the bound', () => {
    const once = withUnsignedAccepted(withUnsignedAccepted(empty, A), A);
    expect(once.unsignedAccepted).toEqual([A]);
    const many = Array.from({ length: QUARANTINE_MAX + 2 }, (_, i) => digest(0x200 + i)).reduce(
      withUnsignedAccepted,
      empty,
    );
    expect(many.unsignedAccepted).toEqual(Array.from({ length: QUARANTINE_MAX }, (_, i) => digest(0x202 + i)));
    expect(isUnsignedAccepted(many, digest(0x201))).toBe(false);
    expect(isUnsignedAccepted(many, digest(0x202))).toBe(true);
  });

  it('are forgotten when the same bytes come signed, and the key goes with the last one', () => {
    const two = withUnsignedAccepted(withUnsignedAccepted(populated, A), B);
    expect(withSignedBinary(two, A).unsignedAccepted).toEqual([B]);
    const none = withSignedBinary(withSignedBinary(two, A), B);
    expect(none).toEqual(populated);
    expect(serializeUpgradeState(none)).toBe(serializeUpgradeState(populated));
    expect(withSignedBinary(populated, A)).toBe(populated);
  });

  it('leave a state file without them byte for byte as before', () => {
    expect(serializeUpgradeState(populated)).not.toContain('unsignedAccepted');
  });

  it.each([
    ['an empty list', () => mutate((state) => (state.unsignedAccepted = []))],
    ['not a list', () => mutate((state) => (state.unsignedAccepted = A))],
    ['a digest twice', () => mutate((state) => (state.unsignedAccepted = [A, A]))],
    ['not a digest', () => mutate((state) => (state.unsignedAccepted = ['abc']))],
    [
      'more than the bound',
      () =>
        mutate((state) => (state.unsignedAccepted = Array.from({ length: QUARANTINE_MAX + 1 }, (_, i) => digest(i)))),
    ],
  ])('refuse %s: E_STATE', (_name, text) => {
    expect(codeOf(text())).toBe('E_STATE');
  });

  it('parse back from a written file', () => {
    const text = mutate((state) => (state.unsignedAccepted = [A, B]));
    expect(codeOf(text)).toBe('ok');
    const parsed = parseUpgradeState(text);
    expect(parsed.ok && parsed.value.unsignedAccepted).toEqual([A, B]);
  });
});
