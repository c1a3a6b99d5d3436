import type { Writable } from 'node:stream';

const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH = 30;
const MIB = 1024 * 1024;

/**
 * A one-line download progress bar for terminals. It redraws at most every 100 ms and erases
 * itself when done, so the command's real output starts on a clean line.
 */
export class ProgressBar {
  private lastDrawMs = 0;
  private drawn = false;
  private readonly startMs: number;

  constructor(
    private readonly stream: Writable,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.startMs = nowMs();
  }

  update(bytes: number, totalBytes: number | null): void {
    const now = this.nowMs();
    if (now - this.lastDrawMs < REDRAW_INTERVAL_MS && !(totalBytes !== null && bytes >= totalBytes)) return;
    this.lastDrawMs = now;
    this.drawn = true;
    this.stream.write(`\r${renderProgress(bytes, totalBytes, now - this.startMs)}\u001b[K`);
  }

  finish(): void {
    if (this.drawn) this.stream.write('\r\u001b[K');
    this.drawn = false;
  }
}

export function renderProgress(bytes: number, totalBytes: number | null, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? `${(bytes / MIB / (elapsedMs / 1000)).toFixed(1)} MiB/s` : '';
  if (totalBytes === null || totalBytes <= 0) return `Downloading ${(bytes / MIB).toFixed(1)} MiB ${rate}`.trimEnd();
  const fraction = Math.min(1, bytes / totalBytes);
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
  return `Downloading [${bar}] ${(fraction * 100).toFixed(0).padStart(3)}% ${(bytes / MIB).toFixed(1)}/${(totalBytes / MIB).toFixed(1)} MiB ${rate}`.trimEnd();
}
