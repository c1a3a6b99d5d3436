import type { Writable } from 'node:stream';
import { formatClockTime } from '../../../domain/common/duration-text.js';
import { formatByteFraction, formatByteRate, formatBytes } from '../../../domain/node/artifact/byte-units.js';
import {
  nextTransferRate,
  remainingTimeMs,
  startTransferRate,
  type TransferRate,
} from '../../../domain/node/artifact/transfer-rate.js';
import type { Clock } from '../../../ports/common/clock.js';
import { terminalLineFor, type TerminalLine } from '../../common/cli/terminal-line.js';
import { DEFAULT_COLUMNS, fitWords, roomIn } from './fit-line.js';

const REDRAW_INTERVAL_MS = 100;
/** While no bytes arrive the bar is redrawn this often, so a stalled download's rate falls and its ETA grows. */
export const IDLE_REDRAW_MS = 1_000;
const BAR_WIDTH_MAX = 30;
/** Below this the bar says too little; the label and figures give way first. */
const BAR_WIDTH_MIN = 10;
const LABEL = 'Downloading';

/** What one redraw shows: the bytes so far, the total when the server said it, the rate once measured. */
export interface DownloadFigures {
  readonly bytes: number;
  readonly totalBytes: number | null;
  /** Bytes per second (a moving average, transfer-rate.ts), or null before the first second. */
  readonly bytesPerSecond: number | null;
}

/** Calls `onTick` every `everyMs` until the returned function is called. */
export type Ticker = (onTick: () => void, everyMs: number) => () => void;

/** No idle redraws: the bar moves with its updates alone. */
export const NO_TICKER: Ticker = () => () => undefined;

/** Ticks on `clock`'s sleeps until stopped. */
export function clockTicker(clock: Clock): Ticker {
  return (onTick, everyMs) => {
    const stop = new AbortController();
    const tick = async (): Promise<void> => {
      for (;;) {
        try {
          await clock.sleep(everyMs, stop.signal);
        } catch {
          return; // stopped
        }
        onTick();
      }
    };
    void tick();
    return () => stop.abort();
  };
}

/**
 * A one-line download progress bar for terminals. It fits the terminal's width as it is at each
 * redraw (`columns`), redraws in place at most every 100 ms, and erases itself when done or
 * when `signal` aborts (an interrupt), so the command's real output starts on a clean line.
 * Log lines printed meanwhile go above it (TerminalLine). Without updates (a server that stopped
 * sending) it is redrawn every IDLE_REDRAW_MS on `ticker`, the rate falling as no bytes come;
 * `finish` stops the ticker, so the command that made the bar must call it.
 */
export class ProgressBar {
  // The first update always draws, however early in the process (monotonic readings start near 0).
  private lastDrawMs = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private rate: TransferRate;
  private readonly line: TerminalLine;
  private last: { readonly bytes: number; readonly totalBytes: number | null } | null = null;
  private readonly stopTicking: () => void;

  constructor(
    private readonly stream: Writable & { readonly columns?: number },
    /** The clock's `monotonicMs` (the rate is a duration): the system clock's on a terminal, a test's own. */
    private readonly nowMs: () => number,
    signal?: AbortSignal,
    /** What redraws a bar left without updates (clockTicker on a terminal). */
    ticker: Ticker = NO_TICKER,
  ) {
    this.rate = startTransferRate(nowMs());
    this.line = terminalLineFor(stream);
    signal?.addEventListener('abort', () => this.finish(), { once: true });
    this.stopTicking = ticker(() => this.redrawIdle(), IDLE_REDRAW_MS);
  }

  update(bytes: number, totalBytes: number | null): void {
    if (this.stopped) return;
    this.last = { bytes, totalBytes };
    const now = this.nowMs();
    if (now - this.lastDrawMs < REDRAW_INTERVAL_MS && !(totalBytes !== null && bytes >= totalBytes)) return;
    this.draw(bytes, totalBytes, now);
  }

  /** Erases the bar for good; later updates draw nothing. */
  finish(): void {
    this.stopped = true;
    this.stopTicking();
    this.line.clear();
  }

  private redrawIdle(): void {
    const now = this.nowMs();
    if (this.stopped || this.last === null || now - this.lastDrawMs < IDLE_REDRAW_MS) return;
    this.draw(this.last.bytes, this.last.totalBytes, now);
  }

  private draw(bytes: number, totalBytes: number | null, now: number): void {
    this.lastDrawMs = now;
    // Sampled at redraws only: at least 100 ms apart, so each sample covers a measurable span.
    this.rate = nextTransferRate(this.rate, bytes, now);
    this.line.show(
      renderProgress({ bytes, totalBytes, bytesPerSecond: this.rate.bytesPerSecond }, this.stream.columns),
    );
  }
}

/**
 * The bar's text, at most `columns - 1` characters: writing the last column would make many
 * terminals wrap, and every redraw would then stack a new line. As the width shrinks, the rate
 * goes first (the ETA says more), then the byte counts, then the label, the ETA, and the bar last.
 */
export function renderProgress(figures: DownloadFigures, columns: number | undefined = DEFAULT_COLUMNS): string {
  const room = roomIn(columns);
  const { bytes, totalBytes, bytesPerSecond } = figures;
  const rate = bytesPerSecond === null ? '' : formatByteRate(bytesPerSecond);
  if (totalBytes === null || !(totalBytes > 0)) return fitWords([LABEL, formatBytes(bytes), rate], room);
  const fraction = Number.isFinite(bytes) ? Math.min(1, Math.max(0, bytes / totalBytes)) : 0;
  const percent = `${(fraction * 100).toFixed(0).padStart(3)}%`;
  const sizes = formatByteFraction(bytes, totalBytes);
  const leftMs = remainingTimeMs(totalBytes - bytes, bytesPerSecond);
  // Rounded up: an ETA never says a transfer is over before it is.
  const eta = leftMs === null ? '' : `ETA ${formatClockTime(Math.ceil(leftMs / 1000))}`;
  const layouts: readonly (readonly [string, readonly string[]])[] = [
    [`${LABEL} `, [sizes, rate, eta]],
    [`${LABEL} `, [sizes, eta]],
    [`${LABEL} `, [eta]],
    [`${LABEL} `, []],
    ['', [eta]],
    ['', []],
  ];
  for (const [label, extras] of layouts) {
    const tail = [percent, ...extras].filter((part) => part !== '').join(' ');
    const barWidth = Math.min(BAR_WIDTH_MAX, room - label.length - '[] '.length - tail.length);
    if (barWidth < BAR_WIDTH_MIN) continue;
    const filled = Math.round(fraction * barWidth);
    return `${label}[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${tail}`;
  }
  return percent.trim().slice(0, room);
}
