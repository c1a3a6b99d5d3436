import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  formatVersion,
  parseVersion,
  VERSION_TEXT_MAX_LENGTH,
  type Version,
} from '../../src/domain/common/version.js';

function parsed(text: string): Version {
  const result = parseVersion(text);
  if (!result.ok) throw new Error(`test setup: ${text} does not parse (${result.failure.code})`);
  return result.value;
}

describe('parseVersion accepts', () => {
  it.each<[string, number, number, number, readonly (string | number)[], string, string]>([
    // text, major, minor, patch, prerelease, build, formatted
    ['0.0.0', 0, 0, 0, [], '', '0.0.0'],
    ['1.2.3', 1, 2, 3, [], '', '1.2.3'],
    ['v1.2.3', 1, 2, 3, [], '', '1.2.3'],
    ['10.20.30', 10, 20, 30, [], '', '10.20.30'],
    ['999999999.999999999.999999999', 999999999, 999999999, 999999999, [], '', '999999999.999999999.999999999'],
    ['1.0.0-alpha', 1, 0, 0, ['alpha'], '', '1.0.0-alpha'],
    ['1.0.0-alpha.1', 1, 0, 0, ['alpha', 1], '', '1.0.0-alpha.1'],
    ['1.0.0-0.3.7', 1, 0, 0, [0, 3, 7], '', '1.0.0-0.3.7'],
    ['1.0.0-x.7.z.92', 1, 0, 0, ['x', 7, 'z', 92], '', '1.0.0-x.7.z.92'],
    ['1.0.0-x-y-z.--', 1, 0, 0, ['x-y-z', '--'], '', '1.0.0-x-y-z.--'],
    ['1.0.0-0a', 1, 0, 0, ['0a'], '', '1.0.0-0a'],
    ['1.0.0-01a', 1, 0, 0, ['01a'], '', '1.0.0-01a'],
    ['1.0.0-rc.1+build.1', 1, 0, 0, ['rc', 1], 'build.1', '1.0.0-rc.1+build.1'],
    ['1.0.0+20130313144700', 1, 0, 0, [], '20130313144700', '1.0.0+20130313144700'],
    ['1.0.0-beta+exp.sha.5114f85', 1, 0, 0, ['beta'], 'exp.sha.5114f85', '1.0.0-beta+exp.sha.5114f85'],
    ['1.0.0+21AF26D3----117B344092BD', 1, 0, 0, [], '21AF26D3----117B344092BD', '1.0.0+21AF26D3----117B344092BD'],
    ['1.0.0+001', 1, 0, 0, [], '001', '1.0.0+001'],
    ['v0.3.1-dirty', 0, 3, 1, ['dirty'], '', '0.3.1-dirty'],
    ['1.0.0-9007199254740991', 1, 0, 0, [9007199254740991], '', '1.0.0-9007199254740991'],
    ['  1.2.3\n', 1, 2, 3, [], '', '1.2.3'],
    ['\tv1.2.3\r\n', 1, 2, 3, [], '', '1.2.3'],
  ])('%j', (text, major, minor, patch, prerelease, build, formatted) => {
    const result = parseVersion(text);
    expect(result).toEqual({ ok: true, value: { major, minor, patch, prerelease, build } });
    if (result.ok) {
      expect(formatVersion(result.value)).toBe(formatted);
      expect(parseVersion(formatVersion(result.value))).toEqual(result);
    }
  });

  it('accepts exactly VERSION_TEXT_MAX_LENGTH characters', () => {
    const text = `1.0.0-${'a'.repeat(VERSION_TEXT_MAX_LENGTH - 6)}`;
    expect(text).toHaveLength(VERSION_TEXT_MAX_LENGTH);
    expect(parseVersion(text).ok).toBe(true);
  });
});

describe('parseVersion rejects with E_CANDIDATE_VERSION', () => {
  it.each([
    ['empty', ''],
    ['whitespace', '   '],
    ['one part', '1'],
    ['two parts', '1.2'],
    ['four parts', '1.2.3.4'],
    ['leading zero major', '01.2.3'],
    ['leading zero minor', '1.02.3'],
    ['leading zero patch', '1.2.03'],
    ['double zero', '00.0.0'],
    ['leading zero numeric prerelease', '1.0.0-01'],
    ['leading zero numeric prerelease later', '1.0.0-alpha.007'],
    ['numeric prerelease beyond 2^53', '1.0.0-12345678901234567890123'],
    ['numeric prerelease 2^53', '1.0.0-9007199254740992'],
    ['major too many digits', '1234567890.0.0'],
    ['negative', '-1.0.0'],
    ['upper-case V prefix', 'V1.2.3'],
    ['double v prefix', 'vv1.2.3'],
    ['v with space', 'v 1.2.3'],
    ['word prefix', 'version 1.2.3'],
    ['trailing text', '1.2.3 (linux/amd64)'],
    ['two lines', '1.2.3\n1.2.4'],
    ['empty prerelease', '1.2.3-'],
    ['empty build', '1.2.3+'],
    ['empty prerelease identifier', '1.2.3-alpha..1'],
    ['trailing dot in prerelease', '1.2.3-alpha.'],
    ['empty build identifier', '1.2.3+build..1'],
    ['invalid prerelease character', '1.2.3-alpha_1'],
    ['invalid build character', '1.2.3+build/1'],
    ['two plus signs', '1.2.3+a+b'],
    ['unicode digits', '１.2.3'],
    ['wildcard', '1.2.x'],
    ['range', '^1.2.3'],
    ['too long', `1.0.0-${'a'.repeat(VERSION_TEXT_MAX_LENGTH - 5)}`],
    ['far too long', '1'.repeat(10_000)],
  ])('%s: %j', (_name, text) => {
    const result = parseVersion(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_CANDIDATE_VERSION');
  });
});

const sign = (n: number): number => Math.sign(n) + 0;

describe('compareVersions', () => {
  it.each([
    ['1.0.0', '2.0.0', -1],
    ['2.0.0', '2.1.0', -1],
    ['2.1.0', '2.1.1', -1],
    ['1.9.9', '1.10.0', -1],
    ['1.2.9', '1.2.10', -1],
    ['9.0.0', '10.0.0', -1],
    ['1.0.0-alpha', '1.0.0', -1],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['0.9.9', '1.0.0-alpha', -1],
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.1', '1.0.0-alpha.beta', -1],
    ['1.0.0-beta.2', '1.0.0-beta.11', -1],
    ['1.0.0-1', '1.0.0-a', -1],
    ['1.0.0-2', '1.0.0-10', -1],
    ['1.0.0-A', '1.0.0-a', -1],
    ['1.0.0-Z', '1.0.0-a', -1],
    ['1.0.0--', '1.0.0-0a', -1],
    ['1.0.0-a.b.c', '1.0.0-a.b.c.d', -1],
    ['1.0.0-9007199254740990', '1.0.0-9007199254740991', -1],
    ['1.2.3', '1.2.3', 0],
    ['v1.2.3', '1.2.3', 0],
    ['1.2.3+build.1', '1.2.3+build.2', 0],
    ['1.2.3+zzz', '1.2.3', 0],
    ['1.0.0-rc.1+a', '1.0.0-rc.1+b', 0],
    ['1.0.0-alpha.1', 'v1.0.0-alpha.1', 0],
  ])('%j vs %j → %i', (a, b, expected) => {
    expect(sign(compareVersions(parsed(a), parsed(b)))).toBe(expected);
    expect(sign(compareVersions(parsed(b), parsed(a)))).toBe(-expected + 0);
  });

  // The precedence example chain of semver.org §11, plus surrounding releases.
  const chain = [
    '0.9.0',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1-0',
    '1.0.1',
    '1.1.0',
    '2.0.0',
  ];

  const pairs = chain.flatMap((a, i) => chain.map((b, j) => [a, b, sign(i - j)] as const));

  it.each(pairs)('chain: %j vs %j → %i', (a, b, expected) => {
    expect(sign(compareVersions(parsed(a), parsed(b)))).toBe(expected);
  });

  it.each(pairs)('antisymmetry: compare(%j, %j) = -compare(b, a)', (a, b) => {
    expect(sign(compareVersions(parsed(a), parsed(b)))).toBe(-sign(compareVersions(parsed(b), parsed(a))) + 0);
  });

  it('sorting any permutation yields the chain', () => {
    const shuffled = [...chain].reverse();
    shuffled.push(shuffled.shift()!);
    const sorted = shuffled.map(parsed).sort(compareVersions).map(formatVersion);
    expect(sorted).toEqual(chain);
  });

  it('is transitive over the chain', () => {
    const versions = chain.map(parsed);
    for (const a of versions) {
      for (const b of versions) {
        for (const c of versions) {
          if (compareVersions(a, b) < 0 && compareVersions(b, c) < 0) expect(compareVersions(a, c)).toBeLessThan(0);
        }
      }
    }
  });
});
