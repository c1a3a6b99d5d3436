/**
 * A small seeded pseudo-random generator (mulberry32) for replayable simulations: the same seed
 * gives the same sequence on every platform, so a failing schedule is replayed from its seed.
 * Not for anything but tests.
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    if (!Number.isInteger(seed)) throw new RangeError('the seed must be an integer');
    this.state = seed >>> 0;
  }

  /** A uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`int(n) needs a positive integer, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    if (max < min) throw new RangeError(`between(${min}, ${max}) is empty`);
    return min + this.int(max - min + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(options: readonly T[]): T {
    if (options.length === 0) throw new RangeError('pick from an empty list');
    return options[this.int(options.length)] as T;
  }

  /** Picks by weight: `[[option, weight], …]` with positive weights. */
  weighted<T>(options: readonly (readonly [T, number])[]): T {
    const total = options.reduce((sum, [, weight]) => sum + weight, 0);
    if (!(total > 0)) throw new RangeError('weighted pick needs a positive total weight');
    let at = this.next() * total;
    for (const [option, weight] of options) {
      if (at < weight) return option;
      at -= weight;
    }
    return (options[options.length - 1] as readonly [T, number])[0];
  }
}
