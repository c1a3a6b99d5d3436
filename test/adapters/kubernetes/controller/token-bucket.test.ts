/**
 * TokenBucket on virtual time: the burst goes out together, then one token every 1/qps second,
 * in order; a Retry-After holds every token back and empties the bucket; with no pacing only a
 * Retry-After waits.
 */
import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_MAX_MS, TokenBucket } from '../../../../src/adapters/fleet/kubernetes/token-bucket.js';
import type { Clock } from '../../../../src/ports/common/clock.js';

/**
 * A memory clock whose sleep moves time when it ends, after everything already due has run (the
 * MemoryClock moves it when a sleep starts, so a waiter handed a token would read the time of the
 * bucket's next sleep).
 */
class MemoryClock implements Pick<Clock, 'monotonicMs' | 'sleep'> {
  private nowMs = 0;

  monotonicMs(): number {
    return this.nowMs;
  }

  advance(ms: number): void {
    this.nowMs += ms;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        this.nowMs += ms;
        resolve();
      }),
    );
  }
}

/** Takes `count` tokens all at once; the monotonic time at which each was handed out, in the order asked. */
async function together(bucket: TokenBucket, clock: MemoryClock, count: number): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      await bucket.take();
      times[index] = clock.monotonicMs();
    }),
  );
  return times;
}

/** Takes `count` tokens one after another. */
async function oneByOne(bucket: TokenBucket, clock: MemoryClock, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    await bucket.take();
    times.push(clock.monotonicMs());
  }
  return times;
}

const steps = (times: readonly number[]): number[] =>
  times.slice(1).map((time, index) => time - (times[index] as number));

describe('a token bucket', () => {
  it('hands out the burst at once, then one token every 1/qps second, to waiters in the order they asked', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, { qps: 20, burst: 30 });
    const times = await together(bucket, clock, 230);
    expect(times.slice(0, 30)).toEqual(Array(30).fill(0));
    expect(new Set(steps(times.slice(29)))).toEqual(new Set([50]));
    // 200 tokens beyond the burst take 10 s: 20 a second.
    expect(times[229]).toBe(10_000);
  });

  it('refills while unused, never beyond the burst', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, { qps: 10, burst: 5 });
    await together(bucket, clock, 5);
    clock.advance(300);
    // Three tokens came back in 300 ms: three at once, then 100 ms apart.
    expect(await oneByOne(bucket, clock, 5)).toEqual([300, 300, 300, 400, 500]);
    clock.advance(60_000);
    const start = clock.monotonicMs();
    const times = await together(bucket, clock, 7);
    expect(times.map((time) => time - start)).toEqual([0, 0, 0, 0, 0, 100, 200]);
  });

  it('a rate that is no whole number of milliseconds apart is kept within a millisecond a token', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, { qps: 3, burst: 1 });
    const times = await oneByOne(bucket, clock, 301);
    // 300 tokens after the first at 3 a second: 100 s, and at most 1 ms a token more.
    expect(times[300]).toBeGreaterThanOrEqual(100_000);
    expect(times[300]).toBeLessThanOrEqual(100_300);
  });

  it('a Retry-After holds every token back until it passed, and the writes after it are paced from an empty bucket', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, { qps: 20, burst: 30 });
    await together(bucket, clock, 10);
    bucket.throttled(2_000);
    const times = await together(bucket, clock, 3);
    expect(times).toEqual([2_050, 2_100, 2_150]);
  });

  it('a Retry-After that arrives while writes wait for tokens holds them too', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, { qps: 10, burst: 1 });
    await bucket.take();
    const waiting = together(bucket, clock, 2);
    bucket.throttled(1_000);
    expect(await waiting).toEqual([1_100, 1_200]);
  });

  it('with no pacing, tokens are free until a Retry-After, which still holds them back', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, null);
    expect(await together(bucket, clock, 1_000)).toEqual(Array(1_000).fill(0));
    bucket.throttled(3_000);
    expect(await together(bucket, clock, 3)).toEqual([3_000, 3_000, 3_000]);
    expect(await oneByOne(bucket, clock, 2)).toEqual([3_000, 3_000]);
  });

  it('a Retry-After beyond the maximum is held to it; a negative or NaN one holds nothing', async () => {
    const clock = new MemoryClock();
    const bucket = new TokenBucket(clock, null);
    bucket.throttled(24 * 3_600_000);
    expect(await oneByOne(bucket, clock, 1)).toEqual([RETRY_AFTER_MAX_MS]);
    bucket.throttled(-5);
    bucket.throttled(Number.NaN);
    expect(await oneByOne(bucket, clock, 1)).toEqual([RETRY_AFTER_MAX_MS]);
  });
});
