import type { Writable } from 'node:stream';
import type { RolloutView } from '../rollout/rollout-view.js';
import { renderWatchFrame, renderWatchLine } from './rollout-watch-render.js';

/** When the stream does not say how wide it is. */
const DEFAULT_COLUMNS = 80;
/** Moves the cursor to the start of the line `n` rows up, then erases to the end of the screen. */
const upAndClear = (rows: number): string => (rows === 0 ? '' : `\u001b[${rows}F\u001b[J`);

/**
 * Where `rollout status --watch` prints: on a terminal, a frame redrawn in place, as wide as the
 * terminal is at each read; elsewhere, one line per change. With a document format (`-o json`,
 * `-o yaml`) nothing is printed until the end, so stdout stays one document.
 */
export class WatchPrinter {
  private rowsShown = 0;
  private lastKey: string | null = null;

  constructor(
    private readonly stream: Writable & { readonly isTTY?: boolean; readonly columns?: number },
    private readonly documentOnly: boolean,
  ) {}

  show(view: RolloutView): void {
    if (this.documentOnly) return;
    if (this.stream.isTTY === true) {
      const frame = renderWatchFrame(view, this.stream.columns ?? DEFAULT_COLUMNS);
      this.stream.write(`${upAndClear(this.rowsShown)}${frame.join('\n')}\n`);
      this.rowsShown = frame.length;
      return;
    }
    const { key, line } = renderWatchLine(view);
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.stream.write(`${line}\n`);
  }

  /** The last frame stays on the screen as the command's output. */
  finish(): void {
    this.rowsShown = 0;
  }
}
