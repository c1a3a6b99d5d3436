/** The digest a wave keeps of its machines, and how it names the ones that went missing. */
import { describe, expect, it } from 'vitest';
import {
  combine,
  decodeDigest,
  DIGEST_ORDER,
  digestOf,
  EMPTY_DIGEST,
  encodeDigest,
  membersAmong,
} from '../../../src/domain/fleet/decide/loss-digest.js';
import { Prng } from '../../sim/harness/index.js';

const hashOf = (prng: Prng): string =>
  (prng.nextUint32().toString(16).padStart(8, '0') + prng.nextUint32().toString(16).padStart(8, '0')).slice(0, 12);

describe('the loss digest', () => {
  it('names exactly the machines that left, among any candidates, up to its order', () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const prng = new Prng(seed);
      const all = Array.from({ length: prng.between(0, 400) }, () => hashOf(prng));
      const gone = new Set(all.filter(() => prng.chance(0.05)).slice(0, DIGEST_ORDER));
      // Some of the machines that left are not among the candidates (their Node is gone too).
      const absent = new Set([...gone].filter(() => prng.chance(0.3)));
      const strangers = Array.from({ length: 50 }, () => hashOf(prng));
      const residual = combine(digestOf(all), digestOf(all.filter((hash) => !gone.has(hash))), -1);
      const candidates = [...strangers, ...all.filter((hash) => !absent.has(hash))];
      const found = membersAmong(residual, candidates);
      expect(new Set(found), `seed ${seed}`).toEqual(new Set([...gone].filter((hash) => !absent.has(hash))));
      expect(residual.count - (found?.length ?? 0), `seed ${seed}`).toBe(absent.size);
    }
  });

  it('names nothing when more than its order left', () => {
    const prng = new Prng(7);
    const all = Array.from({ length: 100 }, () => hashOf(prng));
    const residual = combine(digestOf(all), digestOf(all.slice(DIGEST_ORDER + 1)), -1);
    expect(residual.count).toBe(DIGEST_ORDER + 1);
    expect(membersAmong(residual, all)).toBeNull();
  });

  it('counts a machine whose hash is zero', () => {
    const found = membersAmong(digestOf(['000000000000']), ['000000000000', '000000000001']);
    expect(found).toEqual(['000000000000']);
  });

  it('reads back what it writes, and nothing malformed', () => {
    const digest = digestOf(['a1b2c3d4e5f6', '0123456789ab']);
    expect(decodeDigest(encodeDigest(digest))).toEqual(digest);
    expect(decodeDigest(encodeDigest(EMPTY_DIGEST))).toEqual(EMPTY_DIGEST);
    expect(decodeDigest('2:1.2')).toBeNull();
    expect(decodeDigest(42)).toBeNull();
    expect(decodeDigest(`1:${'f'.repeat(16)}${'.0'.repeat(DIGEST_ORDER - 1)}`)).toBeNull();
  });
});
