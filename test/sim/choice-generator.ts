/**
 * An exhaustive generator of bounded choices, after TigerBeetle's `exhaustigen`. A scenario
 * builder asks it for choices (`intInclusive`, `pick`, `bool`) instead of a random generator;
 * `done()` advances the recorded sequence of choices like an odometer, so
 *
 *     const gen = new Gen();
 *     while (!gen.done()) scenario(gen);
 *
 * runs `scenario` once for every combination of choices, each exactly once. Choices may depend
 * on earlier ones (a different bound, or a different number of choices): the odometer only
 * requires that the same earlier answers lead to the same later questions, i.e. that the
 * scenario is deterministic given its choices.
 */
export class Gen {
  private readonly choices: { value: number; bound: number }[] = [];
  private position = 0;
  private started = false;
  private runs = 0;

  /** How many combinations have been started so far. */
  get count(): number {
    return this.runs;
  }

  /**
   * False while a combination remains: the first call starts the first combination, every later
   * call moves to the next one. True once every combination has been visited.
   */
  done(): boolean {
    if (!this.started) {
      this.started = true;
      this.position = 0;
      this.runs = 1;
      return false;
    }
    if (this.position !== this.choices.length) {
      throw new Error(
        `the scenario asked ${this.position} of the ${this.choices.length} choices it made last time: it is not deterministic`,
      );
    }
    // Advance the odometer: bump the last digit that has room, forget every digit after it.
    for (let index = this.choices.length - 1; index >= 0; index -= 1) {
      const digit = this.choices[index] as { value: number; bound: number };
      if (digit.value < digit.bound) {
        digit.value += 1;
        this.choices.length = index + 1;
        this.position = 0;
        this.runs += 1;
        return false;
      }
    }
    return true;
  }

  /** An integer in [0, bound]. */
  intInclusive(bound: number): number {
    if (!Number.isInteger(bound) || bound < 0)
      throw new RangeError(`intInclusive needs a non-negative integer bound, got ${bound}`);
    if (!this.started) throw new Error('call done() before making choices');
    const existing = this.choices[this.position];
    this.position += 1;
    if (existing !== undefined) {
      if (existing.bound !== bound)
        throw new Error(
          `choice ${this.position - 1} changed its bound from ${existing.bound} to ${bound}: the scenario is not deterministic`,
        );
      return existing.value;
    }
    this.choices.push({ value: 0, bound });
    return 0;
  }

  pick<T>(options: readonly T[]): T {
    if (options.length === 0) throw new RangeError('pick from an empty list');
    return options[this.intInclusive(options.length - 1)] as T;
  }

  bool(): boolean {
    return this.intInclusive(1) === 1;
  }

  /** The choices of the current combination, for naming it in a failure message. */
  describe(): string {
    return this.choices
      .slice(0, this.position)
      .map((choice) => `${choice.value}/${choice.bound}`)
      .join(' ');
  }
}
