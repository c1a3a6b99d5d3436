import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCliLogger } from '../../src/app/common/cli/cli-logger.js';
import { ProgressBar } from '../../src/app/node/cli/progress-bar.js';
import { screenAfter } from './terminal-screen.js';

/** A stderr that is (or is not) a terminal, and what was written to it. */
function stderrStream(tty: boolean): {
  stream: PassThrough & { isTTY: boolean; columns: number };
  lines: () => string[];
  raw: () => string;
} {
  const stream = Object.assign(new PassThrough(), { isTTY: tty, columns: 60 });
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  const raw = () => chunks.join('');
  return {
    stream,
    raw,
    lines: () =>
      raw()
        .split('\n')
        .filter((line) => line !== ''),
  };
}

describe('the CLI logger on stderr', () => {
  it('on a terminal, a warning is one readable line led by its level, not JSON', async () => {
    const stderr = stderrStream(true);
    const logger = await createCliLogger('warn', stderr.stream);
    logger.warn({ weakness: 'plain-http' }, 'Downloading over plain HTTP.');
    const [line, ...rest] = stderr.lines();
    expect(rest).toEqual([]);
    expect(line?.startsWith('{')).toBe(false);
    expect(line?.split(':')[0]).toBe('warning');
    expect(line).toContain('weakness=plain-http');
  });

  it('elsewhere, each entry is a JSON line with its numeric level', async () => {
    const stderr = stderrStream(false);
    const logger = await createCliLogger('warn', stderr.stream);
    logger.warn({ weakness: 'no-digest' }, 'No digest.');
    logger.info({}, 'below the level');
    const entries = stderr.lines().map((line) => JSON.parse(line) as { level: number; weakness: string });
    expect(entries).toMatchObject([{ level: 40, weakness: 'no-digest' }]);
  });

  it('a warning during a download is printed above the bar, which is drawn again below it', async () => {
    const stderr = stderrStream(true);
    const logger = await createCliLogger('warn', stderr.stream);
    let now = 0;
    const bar = new ProgressBar(stderr.stream, () => now);
    now = 150;
    bar.update(1024, 4096);
    logger.warn({}, 'Something to know.');
    const screen = screenAfter(stderr.raw(), 60);
    expect(screen).toHaveLength(2);
    expect(screen[0]?.split(':')[0]).toBe('warning');
    expect(screen[1]?.startsWith('Downloading [')).toBe(true);
    bar.finish();
    expect(screenAfter(stderr.raw(), 60).at(-1)).toBe('');
  });

  it('control characters from a logged value never reach the terminal raw', async () => {
    const stderr = stderrStream(true);
    const logger = await createCliLogger('warn', stderr.stream);
    logger.warn({ reason: 'evil\u001b]0;title\u0007\u009b2J' }, 'A server said something.');
    // Control characters are exactly what this looks for.
    // eslint-disable-next-line no-control-regex
    expect(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(stderr.raw())).toBe(false);
  });
});
