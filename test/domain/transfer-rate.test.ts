import { describe, expect, it } from 'vitest';
import { formatClockTime } from '../../src/domain/common/duration-text.js';
import {
  nextTransferRate,
  remainingTimeMs,
  startTransferRate,
  type TransferRate,
} from '../../src/domain/node/artifact/transfer-rate.js';

const MIB = 1024 * 1024;

/** The estimate after readings `[ms, bytes]` taken in order, from a start at 0 ms. */
function after(readings: readonly (readonly [number, number])[]): TransferRate {
  return readings.reduce((rate, [ms, bytes]) => nextTransferRate(rate, bytes, ms), startTransferRate(0));
}

describe('the transfer rate', () => {
  it('is not measured before a second has passed, nor before a byte arrived', () => {
    expect(after([[999, 5 * MIB]]).bytesPerSecond).toBeNull();
    expect(after([[5_000, 0]]).bytesPerSecond).toBeNull();
  });

  it('starts at the average over the first second or more', () => {
    expect(after([[2_000, 4 * MIB]]).bytesPerSecond).toBe(2 * MIB);
  });

  it('holds steady at a steady rate, however unevenly it is sampled', () => {
    const readings: [number, number][] = [];
    for (let ms = 1_000; ms <= 20_000; ms += ms % 3 === 0 ? 100 : 700) readings.push([ms, (ms / 1000) * MIB]);
    expect(after(readings).bytesPerSecond).toBeCloseTo(MIB, 3);
  });

  it('follows a change within seconds, not over the whole transfer', () => {
    // 10 s at 1 MiB/s (a slow start), then 10 s at 5 MiB/s sampled every 100 ms.
    const readings: [number, number][] = [];
    for (let ms = 1_000; ms <= 10_000; ms += 100) readings.push([ms, (ms / 1000) * MIB]);
    for (let ms = 10_100; ms <= 20_000; ms += 100) readings.push([ms, 10 * MIB + ((ms - 10_000) / 1000) * 5 * MIB]);
    const rate = after(readings).bytesPerSecond ?? 0;
    // The average since the start would say 3 MiB/s.
    expect(rate).toBeGreaterThan(4.8 * MIB);
    expect(rate).toBeLessThanOrEqual(5 * MIB);
  });

  it('a reading at the same instant, from a clock that went back, or with fewer bytes changes nothing', () => {
    const measured = after([[2_000, 2 * MIB]]);
    expect(nextTransferRate(measured, 3 * MIB, 2_000)).toBe(measured);
    expect(nextTransferRate(measured, 3 * MIB, 1_500)).toBe(measured);
    expect(nextTransferRate(measured, MIB, 3_000)).toBe(measured);
    expect(nextTransferRate(measured, Number.NaN, 3_000)).toBe(measured);
  });

  it('decays towards zero during a stall, never below it', () => {
    const stalled = after([
      [2_000, 2 * MIB],
      [60_000, 2 * MIB],
    ]);
    expect(stalled.bytesPerSecond).toBeGreaterThanOrEqual(0);
    expect(stalled.bytesPerSecond).toBeLessThan(1);
  });
});

describe('the time a transfer has left', () => {
  it.each([
    ['nothing left', 0, 100, 0],
    ['more than the total arrived', -10, 100, 0],
    ['no rate yet', 100, null, null],
    ['nothing arrives', 100, 0, null],
    ['a rate that is no number', 100, Number.NaN, null],
    ['a remainder that is no number', Number.NaN, 100, null],
    ['42 MiB at 1 MiB/s', 42 * MIB, MIB, 42_000],
    ['a rate so small the time overflows', Number.MAX_VALUE, Number.MIN_VALUE, null],
  ])('%s', (_label, remaining, rate, ms) => {
    expect(remainingTimeMs(remaining, rate)).toBe(ms);
  });
});

describe('formatClockTime', () => {
  it.each([
    [0, '0:00'],
    [42, '0:42'],
    [59.9, '0:59'],
    [600, '10:00'],
    [3_599, '59:59'],
    [3_600, '1:00:00'],
    [3_723, '1:02:03'],
    [100 * 3600 - 1, '99:59:59'],
    [100 * 3600, '>99:59:59'],
    [-5, '0:00'],
    [Number.NaN, '0:00'],
    [Number.POSITIVE_INFINITY, '0:00'],
  ])('%d s reads %s', (seconds, text) => {
    expect(formatClockTime(seconds)).toBe(text);
  });
});
