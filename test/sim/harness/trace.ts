/**
 * One trace format for the simulations: one line per step, numbered, each a symbol (what kind of
 * step), what happened, and optionally the state it left, after a `|`:
 *
 *     12 H handle up1 -> done                              | cur=green:v2.0.0 lg=blue …
 *
 * `#` lines are decisions made outside the simulated world (a seed, an armed crash).
 */
export interface TraceLine {
  readonly symbol: string;
  readonly text: string;
  readonly state: string;
}

const TEXT_COLUMNS = 48;

export class Trace {
  private readonly lines: TraceLine[] = [];

  add(symbol: string, text: string, state = ''): void {
    this.lines.push({ symbol, text, state });
  }

  /** A decision made outside the world. */
  note(text: string): void {
    this.add('#', text);
  }

  get length(): number {
    return this.lines.length;
  }

  /** The step texts alone, in order (for tests that assert on the path a run took). */
  texts(): string[] {
    return this.lines.map((line) => line.text);
  }

  format(): string {
    return this.lines
      .map((line, index) => {
        const body = line.state === '' ? line.text : `${line.text.padEnd(TEXT_COLUMNS, ' ')} | ${line.state}`;
        return `${String(index).padStart(3, ' ')} ${line.symbol} ${body}`;
      })
      .join('\n');
  }

  /** The texts on one line, for short runs: `a → b → c`. */
  oneLine(): string {
    return this.texts().join(' → ');
  }
}
