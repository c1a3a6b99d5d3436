import { describe, expect, it } from 'vitest';
import { formatByteFraction, formatByteRate, formatBytes, MIB } from '../../src/domain/node/artifact/byte-units.js';

const KIB = 1024;
const GIB = 1024 * MIB;

describe('formatBytes: the unit a size reads best in', () => {
  it.each([
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [Math.round(12.3 * KIB), '12.3 KiB'],
    // Rounding would read "1024.0 KiB": the next unit up reads better.
    [1024 * KIB - 1, '1.0 MiB'],
    [1024 * KIB - 52, '1023.9 KiB'],
    [MIB, '1.0 MiB'],
    [4 * MIB, '4.0 MiB'],
    [GIB - 1, '1.00 GiB'],
    [GIB, '1.00 GiB'],
    [Math.round(1.2 * GIB), '1.20 GiB'],
    [5 * 1024 * GIB, '5120.00 GiB'],
  ])('%d bytes read %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('%d (not a size) reads 0 B', (bytes) => {
    expect(formatBytes(bytes)).toBe('0 B');
  });
});

describe('formatByteFraction: both figures in the total’s unit', () => {
  it.each([
    [300, 1023, '300/1023 B'],
    [0, 1024, '0.0/1.0 KiB'],
    [MIB / 2, 4 * MIB, '0.5/4.0 MiB'],
    [100, 4 * MIB, '0.0/4.0 MiB'],
    [GIB / 4, Math.round(1.2 * GIB), '0.25/1.20 GiB'],
    [MIB - 1, MIB - 1, '1.0/1.0 MiB'],
    [-5, 2048, '0.0/2.0 KiB'],
  ])('%d of %d bytes read %s', (done, total, text) => {
    expect(formatByteFraction(done, total)).toBe(text);
  });
});

describe('formatByteRate', () => {
  it.each([
    [0, '0 B/s'],
    [512, '512 B/s'],
    [3.4 * MIB, '3.4 MiB/s'],
    [Number.NaN, '0 B/s'],
  ])('%d bytes a second read %s', (rate, text) => {
    expect(formatByteRate(rate)).toBe(text);
  });
});
