import { describe, expect, it } from 'vitest';
import {
  isSha256,
  parseOptionalSha256,
  parseSha256,
  sha256FromHex,
  shortDigest,
  type Sha256,
} from '../../src/domain/common/digest.js';

const HEX = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const UPPER = HEX.toUpperCase();
const MIXED = 'E3b0C44298fc1c149AFBF4c8996fb92427ae41e4649b934ca495991b7852B855';

describe('parseSha256 accepts', () => {
  it.each([
    ['plain lower-case hex', HEX],
    ['upper-case hex', UPPER],
    ['mixed-case hex', MIXED],
    ['sha256: prefix', `sha256:${HEX}`],
    ['SHA256: prefix', `SHA256:${HEX}`],
    ['Sha256: prefix', `Sha256:${HEX}`],
    ['sha256: prefix with upper-case hex', `sha256:${UPPER}`],
    ['leading spaces', `   ${HEX}`],
    ['trailing newline', `${HEX}\n`],
    ['surrounding tabs and CRLF', `\t${HEX}\r\n`],
    ['surrounding whitespace around a prefix', `  sha256:${HEX}  `],
    ['no-break space and BOM around', `\u00a0\ufeff${HEX}\u00a0`],
    ['all zeros', '0'.repeat(64)],
    ['all f', 'F'.repeat(64)],
  ])('%s', (_name, text) => {
    const result = parseSha256(text);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value).toBe(
        text
          .trim()
          .replace(/^sha256:/i, '')
          .toLowerCase(),
      );
      expect(isSha256(result.value)).toBe(true);
    }
  });
});

describe('parseSha256 rejects with E_INVALID_DIGEST', () => {
  it.each([
    ['empty', ''],
    ['whitespace only', '   \n\t'],
    ['prefix only', 'sha256:'],
    ['63 characters', HEX.slice(0, 63)],
    ['65 characters', `${HEX}0`],
    ['32 characters', HEX.slice(0, 32)],
    ['128 characters', HEX + HEX],
    ['non-hex letter g', `g${HEX.slice(1)}`],
    ['non-hex letter z at the end', `${HEX.slice(0, 63)}z`],
    ['inner space', `${HEX.slice(0, 32)} ${HEX.slice(32, 63)}`],
    ['inner newline', `${HEX.slice(0, 32)}\n${HEX.slice(32, 63)}`],
    ['0x prefix', `0x${HEX.slice(2)}`],
    ['0x prefix added', `0x${HEX}`],
    ['double prefix', `sha256:sha256:${HEX}`],
    ['space after prefix', `sha256: ${HEX}`],
    ['other algorithm prefix', `sha512:${HEX}`],
    ['md5 prefix', `md5:${HEX}`],
    ['prefix without colon', `sha256${HEX}`],
    ['dash prefix', `sha-256:${HEX}`],
    ['prefix at the end', `${HEX}:sha256`],
    ['base64 text', '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='],
    ['full-width digits', '０'.repeat(64)],
    ['colon-separated bytes', HEX.match(/../g)!.join(':')],
    ['NUL inside', `${HEX.slice(0, 63)}\0`],
  ])('%s', (_name, text) => {
    const result = parseSha256(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_INVALID_DIGEST');
  });
});

describe('parseOptionalSha256', () => {
  it.each<[string, string | undefined, string | null]>([
    ['undefined', undefined, null],
    ['empty', '', null],
    ['spaces', '   ', null],
    ['newline', '\n', null],
    ['plain', HEX, HEX],
    ['upper-case with prefix and whitespace', ` SHA256:${UPPER}\n`, HEX],
  ])('accepts %s', (_name, text, expected) => {
    expect(parseOptionalSha256(text)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['prefix only', 'sha256:'],
    ['63 characters', HEX.slice(0, 63)],
    ['65 characters', `${HEX}a`],
    ['non-hex', 'x'.repeat(64)],
  ])('rejects %s with E_INVALID_DIGEST', (_name, text) => {
    const result = parseOptionalSha256(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_INVALID_DIGEST');
  });
});

describe('isSha256 (canonical form only)', () => {
  it.each<[string, unknown, boolean]>([
    ['lower-case hex', HEX, true],
    ['upper-case hex', UPPER, false],
    ['prefixed', `sha256:${HEX}`, false],
    ['surrounded by whitespace', ` ${HEX}`, false],
    ['trailing newline', `${HEX}\n`, false],
    ['63 characters', HEX.slice(0, 63), false],
    ['65 characters', `${HEX}0`, false],
    ['empty', '', false],
    ['number', 42, false],
    ['null', null, false],
    ['undefined', undefined, false],
    ['array', [HEX], false],
    ['object', { digest: HEX }, false],
  ])('%s → %s', (_name, value, expected) => {
    expect(isSha256(value)).toBe(expected);
  });
});

describe('sha256FromHex', () => {
  it('accepts canonical hex', () => {
    expect(sha256FromHex(HEX)).toBe(HEX);
  });

  it.each([UPPER, `sha256:${HEX}`, HEX.slice(1), `${HEX} `, ''])('throws for %j (programming error)', (text) => {
    expect(() => sha256FromHex(text)).toThrow(TypeError);
  });
});

describe('shortDigest', () => {
  it('is the first 12 characters', () => {
    expect(shortDigest(HEX as Sha256)).toBe('e3b0c44298fc');
  });
});
