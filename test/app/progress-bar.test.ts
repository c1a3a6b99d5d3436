import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  clockTicker,
  IDLE_REDRAW_MS,
  ProgressBar,
  renderProgress,
  type Ticker,
} from '../../src/app/node/cli/progress-bar.js';
import { SteppedClock } from '../support/stepped-clock.js';
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

/** What a redraw shows `bytes` of `totalBytes` in, at `bytesPerSecond` (null: not measured yet). */
const figures = (bytes: number, totalBytes: number | null, bytesPerSecond: number | null = null) => ({
  bytes,
  totalBytes,
  bytesPerSecond,
});

describe('progress bar', () => {
  it.each([
    [0, 100, 'Downloading [------------------------------]   0%'],
    [50, 100, 'Downloading [###############---------------]  50%'],
    [100, 100, 'Downloading [##############################] 100%'],
  ])('renders %d of %d bytes', (bytes, total, prefix) => {
    expect(renderProgress(figures(bytes, total)).startsWith(prefix)).toBe(true);
  });

  it('golden, at 80 columns: bar, percentage, sizes in the total’s unit, rate and ETA', () => {
    expect(renderProgress(figures(Math.round(12.3 * MIB), Math.round(45.6 * MIB), 3.4 * MIB), 80)).toBe(
      'Downloading [#######--------------------]  27% 12.3/45.6 MiB 3.4 MiB/s ETA 0:10',
    );
  });

  it('a small file reads in bytes or KiB, not "0.0/0.0 MiB"', () => {
    expect(renderProgress(figures(300, 1023), 80)).toContain(' 300/1023 B');
    expect(renderProgress(figures(10 * 1024, 40 * 1024), 80)).toContain(' 10.0/40.0 KiB');
  });

  it('no rate and no ETA before the rate is measured; an ETA in hours for a long one', () => {
    const early = renderProgress(figures(MIB, 100 * MIB), 80);
    expect(early).not.toMatch(/\/s|ETA/);
    const slow = renderProgress(figures(0, 4 * 1024 * MIB, MIB), 200);
    expect(slow).toContain(' 1.0 MiB/s ETA 1:08:16');
  });

  it('a finished download says ETA 0:00', () => {
    expect(renderProgress(figures(4 * MIB, 4 * MIB, MIB), 80)).toMatch(/ 4\.0\/4\.0 MiB 1\.0 MiB\/s ETA 0:00$/);
  });

  it('renders a byte count and a rate when the length is unknown', () => {
    expect(renderProgress(figures(3 * MIB, null, 3 * MIB))).toBe('Downloading 3.0 MiB 3.0 MiB/s');
    expect(renderProgress(figures(512, null))).toBe('Downloading 512 B');
  });

  it.each([
    [80, /^Downloading \[#+-*\] {2}27% 12\.3\/45\.6 MiB 3\.4 MiB\/s ETA 0:10$/],
    [60, /^Downloading \[#+-*\] {2}27% 12\.3\/45\.6 MiB ETA 0:10$/],
    [45, /^Downloading \[#+-*\] {2}27% ETA 0:10$/],
    [30, /^Downloading \[#+-*\] {2}27%$/],
    [28, /^\[#+-*\] {2}27% ETA 0:10$/],
    [20, /^\[#+-*\] {2}27%$/],
    [16, /^27%$/],
  ])('at %d columns the rate goes first, then the sizes, the label, the ETA', (columns, pattern) => {
    expect(renderProgress(figures(Math.round(12.3 * MIB), Math.round(45.6 * MIB), 3.4 * MIB), columns)).toMatch(
      pattern,
    );
  });

  it.each([200, 80, 50, 30, 12, 1])(
    'fits a terminal %d columns wide (never its last column) for every size and rate',
    (columns) => {
      const widths: number[] = [];
      for (const total of [null, 1, 999 * MIB, 99_999 * MIB, 5 * 1024 * 1024 * MIB]) {
        for (const fraction of [0, 0.37, 1]) {
          for (const rate of [null, 0, 1, 1e-9, 900 * MIB])
            widths.push(
              renderProgress(figures(Math.round((total ?? 5 * MIB) * fraction), total, rate), columns).length,
            );
        }
      }
      expect(Math.max(...widths)).toBeLessThanOrEqual(Math.max(1, columns - 1));
    },
  );

  it('on a fake clock: the rate and ETA appear after a second, and the ETA counts down steadily', () => {
    const { stream, chunks } = terminal(100);
    let now = 0;
    const bar = new ProgressBar(stream, () => now);
    const shown: { readonly atMs: number; readonly line: string }[] = [];
    for (let step = 1; step <= 40; step += 1) {
      now = step * 150;
      bar.update(step * 150 * 1024, 60 * MIB);
      shown.push({ atMs: now, line: screenAfter(chunks.join(''), 100).at(-1) ?? '' });
    }
    // 150 KiB every 150 ms is 1000 KiB/s: 60 MiB take 61.44 s from the start.
    expect(shown.filter(({ atMs }) => atMs < 1000).some(({ line }) => /\/s|ETA/.test(line))).toBe(false);
    expect(shown.at(-1)?.line).toMatch(/ 5\.9\/60\.0 MiB 1000\.0 KiB\/s ETA 0:56$/);
    for (const { atMs, line } of shown.filter(({ atMs }) => atMs >= 1000)) {
      const [, minutes, seconds] = /ETA (\d+):(\d\d)$/.exec(line) ?? [];
      const etaS = Number(minutes) * 60 + Number(seconds);
      expect(Math.abs(etaS - (61_440 - atMs) / 1000)).toBeLessThanOrEqual(1);
    }
  });

  it('a stalled download is redrawn every second on its ticker: the rate falls and the ETA grows', () => {
    const { stream, chunks } = terminal(100);
    let now = 0;
    let tick = (): void => undefined;
    let ticking = true;
    const ticker: Ticker = (onTick) => ((tick = onTick), () => (ticking = false));
    const bar = new ProgressBar(stream, () => now, undefined, ticker);
    for (now = 150; now <= 3_000; now += 150) bar.update(now * 1024, 60 * MIB);
    const figures = (): { rate: number; etaS: number } => {
      const [, rate, minutes, seconds] =
        /([\d.]+) KiB\/s ETA (\d+):(\d\d)$/.exec(screenAfter(chunks.join(''), 100).at(-1) ?? '') ?? [];
      return { rate: Number(rate), etaS: Number(minutes) * 60 + Number(seconds) };
    };
    const flowing = figures();
    const seen = [flowing];
    for (let second = 1; second <= 5; second += 1) {
      now += IDLE_REDRAW_MS;
      tick();
      seen.push(figures());
    }
    expect(flowing.rate).toBeCloseTo(1000, -1);
    for (const [previous, next] of seen.slice(1).map((entry, at) => [seen[at]!, entry] as const)) {
      expect(next.rate).toBeLessThan(previous.rate);
      expect(next.etaS).toBeGreaterThan(previous.etaS);
    }
    bar.finish();
    expect(ticking).toBe(false);
  });

  it('clockTicker ticks on the clock every interval until stopped', async () => {
    const clock = new SteppedClock();
    let ticks = 0;
    const stop = clockTicker(clock)(() => (ticks += 1), IDLE_REDRAW_MS);
    const startMs = clock.monotonicMs();
    await clock.runUntil(() => ticks === 3, 20);
    expect(clock.monotonicMs() - startMs).toBe(3 * IDLE_REDRAW_MS);
    stop();
    await clock.runUntil(() => clock.sleepers === 0, 5);
    expect(ticks).toBe(3);
  });

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
