import { describe, expect, it } from 'vitest';
import { Gen } from './choice-generator.js';
import { Prng } from './harness/index.js';

function permutation(gen: Gen, items: readonly string[]): string {
  const pool = [...items];
  let out = '';
  while (pool.length > 0) out += pool.splice(gen.intInclusive(pool.length - 1), 1)[0] ?? '';
  return out;
}

describe('Gen (exhaustive choice generator)', () => {
  it('visits every permutation of "abcd" exactly once (4! = 24)', () => {
    const gen = new Gen();
    const seen: string[] = [];
    while (!gen.done()) seen.push(permutation(gen, ['a', 'b', 'c', 'd']));
    expect(seen).toHaveLength(24);
    expect(new Set(seen).size).toBe(24);
    expect(gen.count).toBe(24);
  });

  it('handles choices whose number and bounds depend on earlier ones (subsets of size ≤ 2 of 5)', () => {
    const gen = new Gen();
    const seen: string[] = [];
    while (!gen.done()) {
      const size = gen.intInclusive(2);
      const first = size >= 1 ? gen.intInclusive(size === 2 ? 3 : 4) : null;
      const second = size === 2 && first !== null ? first + 1 + gen.intInclusive(3 - first) : null;
      seen.push([first, second].filter((value) => value !== null).join(','));
    }
    // 1 empty + 5 singletons + C(5,2) = 10 pairs.
    expect(seen).toHaveLength(16);
    expect(new Set(seen).size).toBe(16);
  });

  it('runs a scenario without choices once, and pick covers every option', () => {
    const none = new Gen();
    let runs = 0;
    while (!none.done()) runs += 1;
    expect(runs).toBe(1);

    const gen = new Gen();
    const picked: string[] = [];
    while (!gen.done()) picked.push(`${gen.pick(['x', 'y', 'z'])}${gen.bool() ? '+' : '-'}`);
    expect(picked).toEqual(['x-', 'x+', 'y-', 'y+', 'z-', 'z+']);
  });

  it('refuses a scenario that is not deterministic', () => {
    const gen = new Gen();
    let flip = 0;
    expect(() => {
      while (!gen.done()) {
        flip += 1;
        gen.intInclusive(flip === 1 ? 1 : 2);
      }
    }).toThrow(/not deterministic/);
  });
});

describe('Prng (mulberry32)', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const sequence = (seed: number) => {
      const prng = new Prng(seed);
      return Array.from({ length: 8 }, () => prng.nextUint32());
    };
    expect(sequence(42)).toEqual(sequence(42));
    expect(sequence(42)).not.toEqual(sequence(43));
  });

  it('int(n) stays in range and reaches every value', () => {
    const prng = new Prng(7);
    const seen = new Set<number>();
    for (let index = 0; index < 2000; index += 1) {
      const value = prng.int(10);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(10);
      seen.add(value);
    }
    expect(seen.size).toBe(10);
    expect(new Set(Array.from({ length: 200 }, () => prng.pick(['a', 'b', 'c'])))).toEqual(new Set(['a', 'b', 'c']));
  });
});
