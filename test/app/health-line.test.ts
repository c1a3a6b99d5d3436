import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HealthLine, renderHealth } from '../../src/app/node/cli/health-line.js';
import type { HealthProgress } from '../../src/app/node/health/health-progress.js';
import { screenAfter } from '../cli/terminal-screen.js';

const AGENT = 'aks-flex-node';
const stable = (stableMs: number, purpose: 'candidate' | 'known-good' = 'candidate'): HealthProgress => ({
  phase: 'stable',
  purpose,
  stableMs,
  neededMs: 3_000,
});
const probe = (successes: number, failures = 0): HealthProgress => ({
  phase: 'probe',
  successes,
  successesNeeded: 2,
  failures,
  failuresAllowed: 3,
});
const watch = (watchedMs: number, windowMs = 600_000): HealthProgress => ({ phase: 'watch', watchedMs, windowMs });

/** A stream that says it is a terminal `columns` wide, and everything written to it. */
function terminal(columns: number): {
  stream: PassThrough & { columns: number };
  chunks: string[];
  screen: () => string[];
} {
  const stream = Object.assign(new PassThrough(), { columns, isTTY: true });
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { stream, chunks, screen: () => screenAfter(chunks.join(''), columns) };
}

describe('the health line’s text', () => {
  it.each([
    [stable(2_150), 'Waiting for aks-flex-node to be healthy: stable 2.1/3.0 s'],
    [stable(2_999), 'Waiting for aks-flex-node to be healthy: stable 2.9/3.0 s'],
    [stable(3_000), 'Waiting for aks-flex-node to be healthy: stable 3.0/3.0 s'],
    [probe(1), 'Waiting for aks-flex-node to be healthy: probe 1/2 successes'],
    [probe(0, 2), 'Waiting for aks-flex-node to be healthy: probe 0/2 successes, 2/3 failures'],
    [watch(62_400), 'Watching aks-flex-node through its watch window: 1:02/10:00'],
    [watch(3_725_000, 4 * 3_600_000), 'Watching aks-flex-node through its watch window: 1:02:05/4:00:00'],
    [stable(500, 'known-good'), 'Rolling back: waiting for aks-flex-node to be healthy: stable 0.5/3.0 s'],
  ])('golden at 80 columns: %j', (progress, text) => {
    expect(renderHealth(progress, AGENT, 80)).toBe(text);
  });

  it.each([
    [50, stable(2_100), 'Health: stable 2.1/3.0 s'],
    [50, watch(62_000), 'Watch window: 1:02/10:00'],
    [50, stable(0, 'known-good'), 'Rollback health: stable 0.0/3.0 s'],
    [20, stable(2_100), 'stable 2.1/3.0 s'],
    [20, probe(1, 1), 'probe 1/2 successes'],
    [11, watch(62_000), '1:02/10:00'],
    [6, stable(2_100), 'stabl'],
  ])('at %d columns the sentence gives way to a label, then to the figures', (columns, progress, text) => {
    expect(renderHealth(progress, AGENT, columns)).toBe(text);
  });

  it.each([200, 80, 60, 40, 20, 12, 5, 1])('fits %d columns, never the last one', (columns) => {
    const all = [stable(0), stable(600_000), probe(0, 99), probe(100), watch(0), watch(86_400_000, 86_400_000)];
    for (const progress of all)
      expect(renderHealth(progress, AGENT, columns).length).toBeLessThanOrEqual(Math.max(1, columns - 1));
  });

  it('a wait that reads no number stays sane', () => {
    expect(renderHealth(stable(-5), AGENT, 80)).toContain('stable 0.0/3.0 s');
  });
});

describe('the health line on a terminal (fake clock)', () => {
  it('redraws a phase at most every 100 ms, a new phase at once, and finishing erases it', () => {
    const { stream, chunks, screen } = terminal(80);
    let now = 0;
    const line = new HealthLine(stream, AGENT, () => now);
    line.observe(stable(0));
    now = 50;
    line.observe(stable(250));
    expect(chunks).toHaveLength(1);
    now = 120;
    line.observe(stable(500));
    expect(screen()).toEqual(['Waiting for aks-flex-node to be healthy: stable 0.5/3.0 s']);
    now = 125;
    line.observe(probe(0));
    expect(screen()).toEqual(['Waiting for aks-flex-node to be healthy: probe 0/2 successes']);
    now = 130;
    line.observe(watch(0, 6_000));
    expect(screen()).toEqual(['Watching aks-flex-node through its watch window: 0:00/0:06']);
    line.finish();
    expect(screen()).toEqual(['']);
    const count = chunks.length;
    now = 1_000;
    line.observe(watch(1_000, 6_000));
    expect(chunks).toHaveLength(count);
  });

  it('the same text is not written again', () => {
    const { stream, chunks } = terminal(80);
    let now = 0;
    const line = new HealthLine(stream, AGENT, () => now);
    line.observe(watch(0, 6_000));
    now = 250;
    line.observe(watch(250, 6_000));
    now = 1_000;
    line.observe(watch(1_000, 6_000));
    expect(chunks.map((chunk) => chunk.replaceAll('\r', '').replaceAll('\u001b[K', ''))).toEqual([
      'Watching aks-flex-node through its watch window: 0:00/0:06',
      'Watching aks-flex-node through its watch window: 0:01/0:06',
    ]);
  });

  it('clear() erases it until the next progress, which draws at once', () => {
    const { stream, screen } = terminal(80);
    let now = 0;
    const line = new HealthLine(stream, AGENT, () => now);
    line.observe(stable(0));
    line.clear();
    expect(screen()).toEqual(['']);
    now = 10;
    line.observe(stable(250));
    expect(screen()).toEqual(['Waiting for aks-flex-node to be healthy: stable 0.2/3.0 s']);
  });

  it('an interrupt erases it at once; then only the rollback’s own wait is drawn', () => {
    const { stream, screen } = terminal(80);
    const interrupt = new AbortController();
    let now = 0;
    const line = new HealthLine(stream, AGENT, () => now, interrupt.signal);
    line.observe(stable(1_000));
    interrupt.abort();
    expect(screen()).toEqual(['']);
    now = 500;
    line.observe(stable(1_250));
    expect(screen()).toEqual(['']);
    line.observe(stable(250, 'known-good'));
    expect(screen()).toEqual(['Rolling back: waiting for aks-flex-node to be healthy: stable 0.2/3.0 s']);
    line.finish();
    expect(screen()).toEqual(['']);
  });

  it('follows a resize at the next redraw', () => {
    const { stream, screen } = terminal(100);
    let now = 0;
    const line = new HealthLine(stream, AGENT, () => now);
    line.observe(stable(0));
    stream.columns = 30;
    now = 200;
    line.observe(stable(1_000));
    expect(screen().at(-1)).toBe('Health: stable 1.0/3.0 s');
  });
});
