import { describe, expect, it } from 'vitest';
import { mergeStreams } from '../../../src/adapters/common/kubernetes/merge-streams.js';

async function* items(values: readonly string[], delayMs: number): AsyncGenerator<string> {
  for (const value of values) {
    await new Promise((done) => setTimeout(done, delayMs));
    yield value;
  }
}

describe('merging the stream scopes', () => {
  it('yields every item of every source as it comes, and ends when all ended', async () => {
    const seen: string[] = [];
    for await (const value of mergeStreams([items(['a1', 'a2'], 5), items(['b1', 'b2', 'b3'], 1)])) seen.push(value);
    expect(seen.sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
  });

  it('ends with the first error at once, while another source is still waiting, and asks that one to return', async () => {
    const stop = new AbortController();
    let returned = false;
    async function* waiting(): AsyncGenerator<string> {
      try {
        yield 'w1';
        await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
      } finally {
        returned = true;
      }
    }
    // A source that fails before its first item: a generator with no yield is the point.
    // eslint-disable-next-line require-yield
    async function* failing(): AsyncGenerator<string> {
      await new Promise((done) => setTimeout(done, 10));
      throw new Error('refused for good');
    }
    const seen: string[] = [];
    const outcome = await (async () => {
      try {
        for await (const value of mergeStreams([waiting(), failing()])) seen.push(value);
        return 'ended';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect({ outcome, seen }).toEqual({ outcome: 'refused for good', seen: ['w1'] });
    // The waiting source returns once its owner's signal lets its wait end.
    stop.abort();
    await new Promise((done) => setTimeout(done, 10));
    expect(returned).toBe(true);
  });
});
