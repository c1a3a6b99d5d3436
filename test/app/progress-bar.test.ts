import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressBar, renderProgress } from '../../src/app/cli/progress-bar.js';

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
