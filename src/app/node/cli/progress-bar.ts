import type { Writable } from 'node:stream';
import { MIB } from '../../../domain/node/artifact/byte-units.js';
import { terminalLineFor, type TerminalLine } from '../../common/cli/terminal-line.js';

const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH_MAX = 30;
/** Below this the bar says too little; the label and figures give way first. */
const BAR_WIDTH_MIN = 10;
/** When the stream does not say how wide it is (not a terminal after all). */
const DEFAULT_COLUMNS = 80;
const LABEL = 'Downloading';

/**
 * A one-line download progress bar for terminals. It fits the terminal's width as it is at each
 * redraw (`columns`), redraws in place at most every 100 ms, and erases itself when done or
 * when `signal` aborts (an interrupt), so the command's real output starts on a clean line.
 * Log lines printed meanwhile go above it (TerminalLine).
 */
export class ProgressBar {
  // The first update always draws, however early in the process (monotonic readings start near 0).
  private lastDrawMs = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private readonly startMs: number;
  private readonly line: TerminalLine;

  constructor(
    private readonly stream: Writable & { readonly columns?: number },
    /** The clock's `monotonicMs` (the rate is a duration): the system clock's on a terminal, a test's own. */
    private readonly nowMs: () => number,
    signal?: AbortSignal,
  ) {
    this.startMs = nowMs();
    this.line = terminalLineFor(stream);
    signal?.addEventListener('abort', () => this.finish(), { once: true });
  }

  update(bytes: number, totalBytes: number | null): void {
    if (this.stopped) return;
    const now = this.nowMs();
    if (now - this.lastDrawMs < REDRAW_INTERVAL_MS && !(totalBytes !== null && bytes >= totalBytes)) return;
    this.lastDrawMs = now;
    this.line.show(renderProgress(bytes, totalBytes, now - this.startMs, this.stream.columns));
  }

  /** Erases the bar for good; later updates draw nothing. */
  finish(): void {
    this.stopped = true;
    this.line.clear();
  }
}

/**
 * The bar's text, at most `columns - 1` characters: writing the last column would make many
 * terminals wrap, and every redraw would then stack a new line. As the width shrinks, the rate
 * goes first, then the byte counts, then the label, and the bar last.
 */
export function renderProgress(
  bytes: number,
  totalBytes: number | null,
  elapsedMs: number,
  columns: number | undefined = DEFAULT_COLUMNS,
): string {
  const usable =
    typeof columns === 'number' && Number.isFinite(columns) && columns >= 1 ? Math.floor(columns) : DEFAULT_COLUMNS;
  const room = Math.max(1, usable - 1);
  const rate = elapsedMs > 0 ? `${(bytes / MIB / (elapsedMs / 1000)).toFixed(1)} MiB/s` : '';
  if (totalBytes === null || totalBytes <= 0) return fitWords([LABEL, `${(bytes / MIB).toFixed(1)} MiB`, rate], room);
  const fraction = Math.min(1, bytes / totalBytes);
  const percent = `${(fraction * 100).toFixed(0).padStart(3)}%`;
  const sizes = `${(bytes / MIB).toFixed(1)}/${(totalBytes / MIB).toFixed(1)} MiB`;
  const layouts: readonly (readonly [string, readonly string[]])[] = [
    [`${LABEL} `, [sizes, rate]],
    [`${LABEL} `, [sizes]],
    [`${LABEL} `, []],
    ['', []],
  ];
  for (const [label, figures] of layouts) {
    const tail = [percent, ...figures].filter((part) => part !== '').join(' ');
    const barWidth = Math.min(BAR_WIDTH_MAX, room - label.length - '[] '.length - tail.length);
    if (barWidth < BAR_WIDTH_MIN) continue;
    const filled = Math.round(fraction * barWidth);
    return `${label}[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${tail}`;
  }
  return percent.trim().slice(0, room);
}

/** As many of `words` as fit in `room`, from the first; cut when even the first does not fit. */
function fitWords(words: readonly string[], room: number): string {
  let text = '';
  for (const word of words.filter((part) => part !== '')) {
    const next = text === '' ? word : `${text} ${word}`;
    if (next.length > room) break;
    text = next;
  }
  return text === '' ? (words[0] ?? '').slice(0, room) : text;
}
