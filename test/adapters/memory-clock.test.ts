import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { caught } from './memory-adapter-fixtures.js';

describe('MemoryClock', () => {
  it('starts at the given epoch, advances on demand and on sleep, without waiting', async () => {
    const clock = new MemoryClock(1_000);
    expect(clock.nowMs()).toBe(1_000);
    clock.advance(500);
    expect(clock.nowMs()).toBe(1_500);
    const started = Date.now();
    await clock.sleep(3_600_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(clock.nowMs()).toBe(3_601_500);
    expect([clock.sleepCount, clock.sleptMs]).toEqual([1, 3_600_000]);
  });

  it('never goes backwards', () => {
    const clock = new MemoryClock(0);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(clock.nowMs()).toBe(0);
  });

  it('rejects with the reason of an already aborted signal and does not advance', async () => {
    const clock = new MemoryClock(0);
    const reason = new Error('stop');
    expect(await caught(clock.sleep(100, AbortSignal.abort(reason)))).toBe(reason);
    expect(clock.nowMs()).toBe(0);
  });

  it('rejects with the reason when the signal aborts during the sleep', async () => {
    const clock = new MemoryClock(0);
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const sleeping = clock.sleep(100, controller.signal);
    controller.abort(reason);
    expect(await caught(sleeping)).toBe(reason);
  });
});
