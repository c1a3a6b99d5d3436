/** Validation of untrusted specs: defaults, and a stable code for every kind of mistake. */
import { describe, expect, it } from 'vitest';
import { count, percent } from '../../../src/domain/fleet/spec/amount.js';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import { parseReleaseSpec } from '../../../src/domain/fleet/spec/release-spec.js';
import type { ValidationCode } from '../../../src/domain/fleet/spec/spec-problems.js';
import { baseSpec, makeRelease } from './fixtures.js';

const codes = (raw: unknown): ValidationCode[] => {
  const parsed = parseRolloutSpec(raw);
  return parsed.ok ? [] : parsed.problems.map((problem) => problem.code);
};
const withStrategy = (strategy: Record<string, unknown>) =>
  baseSpec({ strategy: { waves: [{ name: 'all', percent: 100 }], ...strategy } });
const withWaves = (waves: unknown) => withStrategy({ waves });

describe('parseRolloutSpec', () => {
  it('applies the defaults', () => {
    const parsed = parseRolloutSpec({
      releaseRef: { name: 'agent-1.4.2' },
      targets: { selector: {} },
      strategy: {
        waves: [
          { name: 'canary', count: 3 },
          { name: 'all', percent: 100 },
        ],
      },
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.state).toBe('Preview');
    expect(parsed.value.resumeFromHalt).toBe('');
    expect(parsed.value.strategy).toEqual({
      waves: [
        {
          name: 'canary',
          size: count(3),
          maxInFlight: percent(10),
          failureBudget: count(0),
          bakeMs: 0,
          gate: 'Auto',
          diverse: true,
          analysis: null,
        },
        {
          name: 'all',
          size: percent(100),
          maxInFlight: percent(10),
          failureBudget: percent(1),
          bakeMs: 0,
          gate: 'Auto',
          diverse: false,
          analysis: null,
        },
      ],
      maxUnavailable: null,
      operationTimeoutMs: 30 * 60_000,
      onFailure: 'Halt',
      quarantineOnHalt: true,
      analysis: null,
      nodeReadiness: { enabled: true, timeoutMs: 10 * 60_000 },
    });
    expect(parsed.value.schedule.windows).toEqual([]);
    expect(parsed.value.rollback).toBeNull();
  });

  it('parses windows, durations and int-or-percent fields', () => {
    const parsed = parseRolloutSpec(
      baseSpec({
        strategy: {
          waves: [{ name: 'all', percent: 100, bake: '1h30m', maxInFlight: 7 }],
          maxUnavailable: '5%',
          operationTimeout: '90s',
        },
        schedule: { windows: [{ days: ['Sat', 'Sun'], start: '22:30', duration: '6h', timeZone: 'America/New_York' }] },
      }),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.strategy.waves[0]).toMatchObject({ bakeMs: 5_400_000, maxInFlight: count(7) });
    expect(parsed.value.strategy).toMatchObject({ maxUnavailable: percent(5), operationTimeoutMs: 90_000 });
    expect(parsed.value.schedule.windows).toEqual([
      { days: ['Sat', 'Sun'], startMinute: 22 * 60 + 30, durationMs: 6 * 3_600_000, timeZone: 'America/New_York' },
    ]);
  });

  it.each<[string, unknown, ValidationCode]>([
    ['not an object', 'spec', 'E_FIELD_SHAPE'],
    ['an unknown field', baseSpec({ paused: true }), 'E_FIELD_UNKNOWN'],
    ['no releaseRef', baseSpec({ releaseRef: undefined }), 'E_ROLLOUT_RELEASE_REF'],
    [
      'a bad selector operator',
      baseSpec({ targets: { selector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } } }),
      'E_ROLLOUT_SELECTOR',
    ],
    ['an unknown state', baseSpec({ state: 'Go' }), 'E_ROLLOUT_STATE'],
    ['no waves', withWaves([]), 'E_ROLLOUT_WAVES'],
    [
      '17 waves',
      withWaves(Array.from({ length: 17 }, (_, i) => ({ name: `w${i}`, percent: (i + 1) * 5 }))),
      'E_ROLLOUT_WAVES',
    ],
    ['a wave name that is no DNS label', withWaves([{ name: 'Canary!', percent: 100 }]), 'E_ROLLOUT_WAVE_NAME'],
    [
      'a duplicate wave name',
      withWaves([
        { name: 'a', count: 1 },
        { name: 'a', percent: 100 },
      ]),
      'E_ROLLOUT_WAVE_NAME',
    ],
    ['the reserved wave name', withWaves([{ name: 'rollback', percent: 100 }]), 'E_ROLLOUT_WAVE_NAME'],
    ['count and percent together', withWaves([{ name: 'a', count: 1, percent: 100 }]), 'E_ROLLOUT_WAVE_SIZE'],
    [
      'shrinking percentages',
      withWaves([
        { name: 'a', percent: 50 },
        { name: 'b', percent: 20 },
        { name: 'c', percent: 100 },
      ]),
      'E_ROLLOUT_WAVE_SIZE',
    ],
    ['a last wave short of 100%', withWaves([{ name: 'a', percent: 50 }]), 'E_ROLLOUT_WAVE_SIZE'],
    ['a bad maxInFlight', withWaves([{ name: 'a', percent: 100, maxInFlight: '10' }]), 'E_ROLLOUT_AMOUNT'],
    ['a percentage above 100', withWaves([{ name: 'a', percent: 100, failureBudget: '120%' }]), 'E_ROLLOUT_AMOUNT'],
    ['a bad bake', withWaves([{ name: 'a', percent: 100, bake: '2 days' }]), 'E_ROLLOUT_DURATION'],
    ['a bad gate', withWaves([{ name: 'a', percent: 100, gate: 'Human' }]), 'E_ROLLOUT_GATE'],
    ['a zero operationTimeout', withStrategy({ operationTimeout: '0' }), 'E_ROLLOUT_DURATION'],
    ['a bad onFailure', withStrategy({ onFailure: 'Panic' }), 'E_ROLLOUT_ON_FAILURE'],
    [
      'a rolling-back onFailure without rollback',
      { ...withStrategy({ onFailure: 'RollBackAll' }), rollback: undefined },
      'E_ROLLOUT_ROLLBACK',
    ],
    [
      'a rollback to the same release',
      baseSpec({ rollback: { releaseRef: { name: 'agent-1.4.2' } } }),
      'E_ROLLOUT_ROLLBACK',
    ],
    [
      'a bad window day',
      baseSpec({ schedule: { windows: [{ days: ['Monday'], start: '09:00', duration: '1h' }] } }),
      'E_ROLLOUT_WINDOW',
    ],
    ['a bad window start', baseSpec({ schedule: { windows: [{ start: '9am', duration: '1h' }] } }), 'E_ROLLOUT_WINDOW'],
    [
      'a window longer than a week',
      baseSpec({ schedule: { windows: [{ start: '09:00', duration: '169h' }] } }),
      'E_ROLLOUT_WINDOW',
    ],
    [
      'an unknown time zone',
      baseSpec({ schedule: { windows: [{ start: '09:00', duration: '1h', timeZone: 'Mars/Olympus' }] } }),
      'E_ROLLOUT_WINDOW',
    ],
  ])('reports %s', (_what, raw, code) => {
    expect(codes(raw)).toContain(code);
  });

  it('reports every problem at once, each with its path', () => {
    const parsed = parseRolloutSpec(
      baseSpec({ state: 'Go', strategy: { waves: [{ name: 'a', percent: 100, gate: 'x' }], onFailure: 'y' } }),
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((problem) => problem.path)).toEqual([
      'spec.state',
      'spec.strategy.waves[0].gate',
      'spec.strategy.onFailure',
    ]);
  });
});

describe('parseReleaseSpec', () => {
  it('reads a release', () => {
    const parsed = parseReleaseSpec(makeRelease('r', 'v1.4.2').spec);
    expect(parsed.ok && parsed.value.versionText).toBe('1.4.2');
    expect(parsed.ok && parsed.value.artifacts.map((artifact) => artifact.arch)).toEqual(['amd64', 'arm64']);
    expect(parsed.ok && parsed.value.quarantine).toEqual({ quarantined: false, reason: '' });
  });

  const artifact = { arch: 'amd64', downloadURL: 'https://h/a.tar.gz', sha256: 'a'.repeat(64) };
  it.each<[string, unknown, ValidationCode]>([
    ['no version', { artifacts: [artifact] }, 'E_RELEASE_VERSION'],
    ['a version that is not semver', { version: '1.4', artifacts: [artifact] }, 'E_RELEASE_VERSION'],
    ['no artifacts', { version: '1.0.0', artifacts: [] }, 'E_RELEASE_ARTIFACT'],
    [
      'an unknown architecture',
      { version: '1.0.0', artifacts: [{ ...artifact, arch: 'riscv64' }] },
      'E_RELEASE_ARTIFACT',
    ],
    ['an architecture twice', { version: '1.0.0', artifacts: [artifact, artifact] }, 'E_RELEASE_ARTIFACT'],
    [
      'a URL with user information',
      { version: '1.0.0', artifacts: [{ ...artifact, downloadURL: 'https://u:p@h/a' }] },
      'E_RELEASE_URL',
    ],
    ['a missing digest', { version: '1.0.0', artifacts: [{ ...artifact, sha256: undefined }] }, 'E_RELEASE_DIGEST'],
    [
      'an upper-case digest',
      { version: '1.0.0', artifacts: [{ ...artifact, sha256: 'A'.repeat(64) }] },
      'E_RELEASE_DIGEST',
    ],
    [
      'a quarantine that is no boolean',
      { version: '1.0.0', artifacts: [artifact], quarantine: { quarantined: 'yes' } },
      'E_FIELD_SHAPE',
    ],
  ])('reports %s', (_what, raw, code) => {
    const parsed = parseReleaseSpec(raw);
    expect(parsed.ok ? [] : parsed.problems.map((problem) => problem.code)).toContain(code);
  });
});
