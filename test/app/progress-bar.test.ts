import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressBar, renderProgress } from '../../src/app/node/cli/progress-bar.js';
import { terminalLineFor } from '../../src/app/common/cli/terminal-line.js';
import { screenAfter } from '../cli/terminal-screen.js';

const MIB = 1024 * 1024;

/** A stream that says it is a terminal `columns` wide, and everything written to it. */
function terminal(columns: number): {
  stream: PassThrough & { columns: number };
  written: () => string;
  chunks: string[];
} {
  const stream = Object.assign(new PassThrough(), { columns, isTTY: true });
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, written: () => chunks.join(''), chunks };
}

describe('progress bar', () => {
  it.each([
    [0, 100, 'Downloading [------------------------------]   0%'],
    [50, 100, 'Downloading [###############---------------]  50%'],
    [100, 100, 'Downloading [##############################] 100%'],
  ])('renders %d of %d bytes', (bytes, total, prefix) => {
    expect(renderProgress(bytes, total, 0).startsWith(prefix)).toBe(true);
  });

  it('renders a byte count when the length is unknown', () => {
    expect(renderProgress(3 * 1024 * 1024, null, 1000)).toBe('Downloading 3.0 MiB 3.0 MiB/s');
  });

  it.each([200, 80, 50, 30, 12, 1])(
    'fits a terminal %d columns wide (never its last column) for every size and rate',
    (columns) => {
      const widths: number[] = [];
      for (const total of [null, 1, 999 * MIB, 99_999 * MIB]) {
        for (const fraction of [0, 0.37, 1]) {
          for (const elapsedMs of [0, 1, 60_000])
            widths.push(renderProgress(Math.round((total ?? 5 * MIB) * fraction), total, elapsedMs, columns).length);
        }
      }
      expect(Math.max(...widths)).toBeLessThanOrEqual(Math.max(1, columns - 1));
    },
  );

  it('at 50 columns every redraw stays on one screen line, and finishing leaves that line empty', () => {
    const { stream, written } = terminal(50);
    let now = 0;
    const bar = new ProgressBar(stream, () => now);
    for (let bytes = 0; bytes <= 200 * MIB; bytes += 10 * MIB) {
      now += 150;
      bar.update(bytes, 200 * MIB);
    }
    const drawn = screenAfter(written(), 50);
    expect(drawn).toHaveLength(1);
    expect(drawn[0]?.length).toBeLessThanOrEqual(50);
    expect(drawn[0]?.length).toBeGreaterThan(0);

    bar.finish();
    expect(screenAfter(written(), 50)).toEqual(['']);
  });

  it('follows a resize: the next redraw fits the new width', () => {
    const { stream, written } = terminal(120);
    let now = 0;
    const bar = new ProgressBar(stream, () => now);
    now = 150;
    bar.update(1 * MIB, 4 * MIB);
    stream.columns = 40;
    now = 300;
    bar.update(2 * MIB, 4 * MIB);
    const lines = screenAfter(written(), 40);
    expect(lines.at(-1)?.length).toBeLessThanOrEqual(39);
  });

  it('an interrupt erases the bar at once, and later updates draw nothing', () => {
    const { stream, written, chunks } = terminal(80);
    const interrupt = new AbortController();
    let now = 0;
    const bar = new ProgressBar(stream, () => now, interrupt.signal);
    now = 150;
    bar.update(1 * MIB, 4 * MIB);
    interrupt.abort();
    expect(screenAfter(written(), 80)).toEqual(['']);
    const count = chunks.length;
    now = 300;
    bar.update(2 * MIB, 4 * MIB);
    expect(chunks).toHaveLength(count);
  });

  it('a line printed above the bar ends up above it, and the bar is drawn again below it', () => {
    const { stream, written } = terminal(80);
    let now = 0;
    const bar = new ProgressBar(stream, () => now);
    now = 150;
    bar.update(1 * MIB, 4 * MIB);
    const before = screenAfter(written(), 80);
    terminalLineFor(stream).printAbove('warning: something');
    const after = screenAfter(written(), 80);
    expect(after).toEqual(['warning: something', ...before]);
  });

  it('redraws at most every 100 ms, always at completion, and erases itself', () => {
    const stream = new PassThrough();
    const written: string[] = [];
    stream.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    let now = 0;
    const bar = new ProgressBar(stream, () => now);
    now = 150;
    bar.update(10, 100);
    now = 160;
    bar.update(20, 100);
    now = 170;
    bar.update(100, 100);
    bar.finish();
    expect(written).toHaveLength(3);
    expect(written[2]).toBe('\r\u001b[K');
  });
});
