/** The planner's building blocks: the hash, times and durations, amounts, windows, canary order. */
import { describe, expect, it } from 'vitest';
import {
  count,
  percent,
  resolveCap,
  resolveCumulative,
  resolveTolerance,
} from '../../../src/domain/fleet/spec/amount.js';
import { fnv1a64 } from '../../../src/domain/fleet/order/fnv1a64.js';
import { mix64 } from '../../../src/domain/fleet/order/mix64.js';
import { diverseOrder } from '../../../src/domain/fleet/order/machine-order.js';
import type { ScheduleWindow } from '../../../src/domain/fleet/spec/rollout-spec.js';
import { windowOpen } from '../../../src/domain/fleet/spec/schedule-window.js';
import {
  formatDuration,
  formatTimestamp,
  parseDuration,
  parseTimestamp,
} from '../../../src/domain/fleet/spec/time-text.js';
import { LABEL_ARCH, LABEL_ZONE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng } from '../../sim/harness/index.js';

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64 test vectors', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });
  it('agrees with a BigInt reference over the UTF-8 bytes of random text', () => {
    const reference = (text: string): string => {
      let hash = 0xcbf29ce484222325n;
      for (const byte of new TextEncoder().encode(text))
        hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
      return hash.toString(16).padStart(16, '0');
    };
    const prng = new Prng(11);
    const alphabet = ['a', 'Z', '-', '0', '.', 'é', 'ß', '中', '😀', '\u0000', '\u007f', '\u0080'];
    for (let index = 0; index < 300; index += 1) {
      const text = Array.from({ length: prng.int(40) }, () => prng.pick(alphabet)).join('');
      expect(fnv1a64(text), JSON.stringify(text)).toBe(reference(text));
    }
  });
});

describe('times and durations', () => {
  it('formats and parses RFC 3339 exactly, as the API writes it', () => {
    const prng = new Prng(7);
    for (let index = 0; index < 500; index += 1) {
      const ms = prng.int(4_102_444_800) * 1000; // 1970 … 2100, whole seconds
      expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString().replace('.000Z', 'Z'));
      expect(parseTimestamp(formatTimestamp(ms))).toBe(ms);
    }
    expect(parseTimestamp('2025-01-06T13:00:00.250+01:00')).toBe(Date.UTC(2025, 0, 6, 12, 0, 0, 250));
    expect(parseTimestamp('2025-13-01T00:00:00Z')).toBeNull();
    expect(parseTimestamp(12)).toBeNull();
  });
  it('reads Go durations', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('1d')).toBeNull();
    expect(parseDuration('-5m')).toBeNull();
    expect(parseDuration('8761h')).toBeNull();
    expect(formatDuration(5_400_000)).toBe('1h30m');
  });
});

describe('amounts', () => {
  it('rounds caps up (at least 1) or down, tolerances down, wave targets up within the fleet', () => {
    expect(resolveCap(percent(10), 5, 'up')).toBe(1);
    expect(resolveCap(percent(10), 15, 'up')).toBe(2);
    expect(resolveCap(percent(10), 15, 'down')).toBe(1);
    expect(resolveCap(percent(0), 15, 'down')).toBe(1);
    expect(resolveCap(count(3), 1, 'up')).toBe(3);
    expect(resolveTolerance(percent(1), 99)).toBe(0);
    expect(resolveTolerance(percent(1), 100)).toBe(1);
    expect(resolveCumulative(percent(1), 50)).toBe(1);
    expect(resolveCumulative(count(5), 3)).toBe(3);
  });
});

describe('maintenance windows', () => {
  const at = (iso: string): number => Date.parse(iso);
  const window = (overrides: Partial<ScheduleWindow>): ScheduleWindow => ({
    days: [],
    startMinute: 9 * 60,
    durationMs: 2 * 3_600_000,
    timeZone: 'UTC',
    ...overrides,
  });
  it('opens on the listed days from the start for the duration, on the zone wall clock', () => {
    const berlin = window({ days: ['Mon'], timeZone: 'Europe/Berlin' });
    expect(windowOpen(berlin, at('2025-01-06T07:59:00Z'))).toBe(false); // 08:59 CET
    expect(windowOpen(berlin, at('2025-01-06T08:00:00Z'))).toBe(true); // 09:00 CET
    expect(windowOpen(berlin, at('2025-01-06T09:59:00Z'))).toBe(true);
    expect(windowOpen(berlin, at('2025-01-06T10:00:00Z'))).toBe(false);
    expect(windowOpen(berlin, at('2025-07-07T07:30:00Z'))).toBe(true); // 09:30 CEST
    expect(windowOpen(berlin, at('2025-01-07T08:30:00Z'))).toBe(false); // a Tuesday
  });
  it('runs over midnight into the next day', () => {
    const overnight = window({ days: ['Sun'], startMinute: 23 * 60, durationMs: 3 * 3_600_000 });
    expect(windowOpen(overnight, at('2025-01-05T23:30:00Z'))).toBe(true);
    expect(windowOpen(overnight, at('2025-01-06T01:59:00Z'))).toBe(true); // Monday, opened on Sunday
    expect(windowOpen(overnight, at('2025-01-06T02:00:00Z'))).toBe(false);
    expect(windowOpen(overnight, at('2025-01-06T23:30:00Z'))).toBe(false); // Monday is not listed
  });
});

describe('diverse canary order', () => {
  it('covers every architecture and zone as early as possible, and every machine once', () => {
    const machines = Array.from({ length: 60 }, (_, index) => ({
      name: `m${index}`,
      labels: { [LABEL_ARCH]: index % 10 === 0 ? 'arm64' : 'amd64', [LABEL_ZONE]: `z${index % 3}` },
    }));
    const order = diverseOrder(machines);
    const first = (n: number, key: string): Set<string | undefined> =>
      new Set(order.slice(0, n).map((m) => (m.labels as Record<string, string>)[key]));
    expect(first(2, LABEL_ARCH)).toEqual(new Set(['amd64', 'arm64']));
    expect(first(3, LABEL_ZONE)).toEqual(new Set(['z0', 'z1', 'z2']));
    expect(new Set(order.map((m) => m.name)).size).toBe(60);
  });
  it('keeps each group in hash order, so taking machines out of it never reorders the rest', () => {
    const machines = Array.from({ length: 40 }, (_, index) => ({
      name: `m${index}`,
      labels: { [LABEL_ARCH]: index % 4 === 0 ? 'arm64' : 'amd64', [LABEL_ZONE]: `z${index % 5}` },
    }));
    const order = diverseOrder(machines).map((m) => m.name);
    for (const group of ['amd64', 'arm64']) {
      const members = machines.filter((m) => m.labels[LABEL_ARCH] === group).map((m) => m.name);
      expect(order.filter((name) => members.includes(name)).slice(0, 2)).toEqual(members.slice(0, 2));
    }
  });
});

describe('mix64', () => {
  it('is the splitmix64 finalizer', () => {
    const reference = (hex: string): string => {
      const mask = 0xffffffffffffffffn;
      let z = BigInt(`0x${hex}`);
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
      return (z ^ (z >> 31n)).toString(16).padStart(16, '0');
    };
    const prng = new Prng(13);
    for (let index = 0; index < 300; index += 1) {
      const hex = [prng.nextUint32(), prng.nextUint32()].map((half) => half.toString(16).padStart(8, '0')).join('');
      expect(mix64(hex), hex).toBe(reference(hex));
    }
    expect(mix64('0000000000000000')).toBe('0000000000000000');
  });
  it('spreads names that differ in their last character over the whole order', () => {
    const keys = ['node-17', 'node-18', 'node-19'].map((name) => mix64(fnv1a64(name)).slice(0, 2));
    expect(new Set(keys).size).toBe(3);
  });
});
