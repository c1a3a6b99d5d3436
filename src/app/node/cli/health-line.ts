import type { Writable } from 'node:stream';
import { formatClockTime } from '../../../domain/common/duration-text.js';
import { terminalLineFor, type TerminalLine } from '../../common/cli/terminal-line.js';
import type { HealthObserver, HealthProgress } from '../health/health-progress.js';
import { DEFAULT_COLUMNS, roomIn } from './fit-line.js';

const REDRAW_INTERVAL_MS = 100;

/**
 * The transient line that says what `activate` or `install` waits for once the agent was
 * restarted: its stability, its probe, its watch window, or — after a failure — the previous
 * binary's stability. Without it the command sits silent for `health.stableMs` and the whole
 * watch window (10 minutes by default). It shares the stream's one TerminalLine with the
 * download bar and the log, redraws at most every 100 ms (at once when the phase changes), and
 * is erased when the command ends.
 */
export class HealthLine {
  /** What the request's `onHealthProgress` is given. */
  readonly observe: HealthObserver = (progress) => this.update(progress);
  private lastDrawMs = Number.NEGATIVE_INFINITY;
  private lastKind: string | null = null;
  private lastText: string | null = null;
  private stopped = false;
  private interrupted = false;
  private readonly line: TerminalLine;

  constructor(
    private readonly stream: Writable & { readonly columns?: number },
    private readonly agentName: string,
    /** Paces the redraws only: the figures come from the wait itself, on the upgrader's clock. */
    private readonly nowMs: () => number,
    signal?: AbortSignal,
  ) {
    this.line = terminalLineFor(stream);
    signal?.addEventListener('abort', () => this.interrupt(), { once: true });
  }

  update(progress: HealthProgress): void {
    if (this.stopped) return;
    // After an interrupt only the rollback's own wait is news: the candidate's wait has ended.
    if (this.interrupted && !(progress.phase === 'stable' && progress.purpose === 'known-good')) return;
    const now = this.nowMs();
    const kind = progress.phase === 'stable' ? `stable-${progress.purpose}` : progress.phase;
    if (kind === this.lastKind && now - this.lastDrawMs < REDRAW_INTERVAL_MS) return;
    const text = renderHealth(progress, this.agentName, this.stream.columns);
    // Polls come every `health.pollMs`; the figures move in tenths or whole seconds.
    if (text === this.lastText) return;
    this.lastKind = kind;
    this.lastText = text;
    this.lastDrawMs = now;
    this.line.show(text);
  }

  /** Erases the line until the next progress: for output about to go to the same terminal. */
  clear(): void {
    this.lastKind = null;
    this.lastText = null;
    this.line.clear();
  }

  /** Erases the line for good; later progress draws nothing. */
  finish(): void {
    this.stopped = true;
    this.line.clear();
  }

  /** The interrupted wait's line goes at once; the rollback that follows may draw its own. */
  private interrupt(): void {
    this.interrupted = true;
    this.lastKind = null;
    this.lastText = null;
    this.line.clear();
  }
}

/**
 * The line's text, at most `columns - 1` characters (fit-line.ts). As the width shrinks the
 * sentence gives way to a short label, then to the figures alone, which are cut last.
 */
export function renderHealth(
  progress: HealthProgress,
  agentName: string,
  columns: number | undefined = DEFAULT_COLUMNS,
): string {
  const room = roomIn(columns);
  const { sentence, label, figures } = wording(progress, agentName);
  for (const text of [`${sentence}: ${figures}`, `${label}: ${figures}`, figures]) if (text.length <= room) return text;
  return figures.slice(0, room);
}

function wording(
  progress: HealthProgress,
  agentName: string,
): { readonly sentence: string; readonly label: string; readonly figures: string } {
  const waiting = `Waiting for ${agentName} to be healthy`;
  switch (progress.phase) {
    case 'stable': {
      const rollback = progress.purpose === 'known-good';
      return {
        sentence: rollback ? `Rolling back: waiting for ${agentName} to be healthy` : waiting,
        label: rollback ? 'Rollback health' : 'Health',
        figures: `stable ${tenths(progress.stableMs)}/${tenths(progress.neededMs)} s`,
      };
    }
    case 'probe': {
      const failures = progress.failures > 0 ? `, ${progress.failures}/${progress.failuresAllowed} failures` : '';
      return {
        sentence: waiting,
        label: 'Health',
        figures: `probe ${progress.successes}/${progress.successesNeeded} successes${failures}`,
      };
    }
    case 'watch':
      return {
        sentence: `Watching ${agentName} through its watch window`,
        label: 'Watch window',
        // Elapsed time rounds down, the window's length up: "done" only once it is.
        figures: `${formatClockTime(Math.floor(progress.watchedMs / 1000))}/${formatClockTime(Math.ceil(progress.windowMs / 1000))}`,
      };
  }
}

/** Seconds with one decimal, rounded down so "3.0/3.0 s" shows only once the interval passed. */
function tenths(ms: number): string {
  return (Math.floor(Math.max(0, ms) / 100) / 10).toFixed(1);
}
