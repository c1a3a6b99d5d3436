// The rollout CRDs in deploy/: their shape, their CEL rules (each checked by a hand-written twin,
// including the transition rules) and the examples against their schemas.

import { describe, expect, it } from 'vitest';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import { withDefaults, type Json, type Schema } from './crd-schema.js';
import {
  check,
  type Doc,
  edit,
  RELEASE,
  releaseCrd,
  releaseExamples,
  ROLLOUT,
  rolloutCrd,
  rolloutExample,
  RULES,
  rulesIn,
} from './rollout-manifests.js';

describe('the rollout CRDs', () => {
  it('are the cluster-scoped agent-upgrade.dev/v1alpha1 AgentRelease (arel) and AgentRollout (arl) with a status subresource', () => {
    for (const [crd, kind, short] of [
      [releaseCrd, 'AgentRelease', 'arel'],
      [rolloutCrd, 'AgentRollout', 'arl'],
    ] as const) {
      const plural = `${kind.toLowerCase()}s`;
      expect(crd['metadata'].name).toBe(`${plural}.agent-upgrade.dev`);
      expect(crd['spec']).toMatchObject({ group: 'agent-upgrade.dev', scope: 'Cluster' });
      expect(crd['spec'].names).toEqual({
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        shortNames: [short],
      });
      expect(crd['spec'].versions).toHaveLength(1);
      expect(crd['spec'].versions[0]).toMatchObject({
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
      });
    }
  });

  it('print Release, Phase, Wave, Progress, In-Flight, Failed and Age for a rollout', () => {
    expect(rolloutCrd['spec'].versions[0].additionalPrinterColumns).toEqual([
      { name: 'Release', type: 'string', jsonPath: '.spec.releaseRef.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Wave', type: 'string', jsonPath: '.status.currentWave' },
      { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
      { name: 'In-Flight', type: 'integer', jsonPath: '.status.counts.inFlight' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.counts.failed' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  it('carry exactly the CEL rules this test knows the meaning of', () => {
    const used = new Set([...rulesIn(RELEASE), ...rulesIn(ROLLOUT)]);
    expect([...used].sort()).toEqual([...RULES.keys()].sort());
  });

  it('default what the planner defaults, to the same values', () => {
    const spec = {
      releaseRef: { name: 'r' },
      targets: { selector: {} },
      strategy: {
        waves: [
          { name: 'a', count: 1 },
          { name: 'b', percent: 100 },
        ],
      },
    };
    const specSchema = (ROLLOUT['properties'] as Doc)['spec'] as Schema;
    const defaulted = withDefaults(spec as unknown as Json, specSchema) as Doc;
    expect(defaulted['state']).toBe('Preview');
    expect(defaulted['strategy']).toMatchObject({ operationTimeout: '30m', onFailure: 'Halt', quarantineOnHalt: true });
    expect(parseRolloutSpec(defaulted)).toEqual(parseRolloutSpec(spec));
    const windows = { ...spec, schedule: { windows: [{ start: '09:00', duration: '1h' }] } };
    expect(parseRolloutSpec(withDefaults(windows as unknown as Json, specSchema))).toEqual(parseRolloutSpec(windows));
  });
});

const METRIC = {
  name: 'error-ratio',
  prometheus: { address: 'http://prometheus.monitoring:9090', query: 'sum(agent_errors)' },
  successCondition: 'result[0] < 0.01',
};

describe('the CRD rules', () => {
  it('accept the examples', () => {
    for (const release of releaseExamples) expect(check(release, RELEASE), release['metadata'].name).toEqual([]);
    expect(check(rolloutExample, ROLLOUT)).toEqual([]);
  });

  it('accept an analysis on the rollout and on a wave, and the Node gate settings', () => {
    const analysed = edit(rolloutExample, (d) => {
      d['spec'].strategy.analysis = { metrics: [{ ...METRIC, interval: '30s', count: 3, failureLimit: 1 }] };
      d['spec'].strategy.waves[0].analysis = { metrics: [METRIC] };
      d['spec'].strategy.nodeReadiness = { enabled: true, timeout: '5m' };
    });
    expect(check(analysed, ROLLOUT)).toEqual([]);
  });

  it.each<[string, (doc: Doc) => void]>([
    ['a maxInFlight without %', (d) => (d['spec'].strategy.waves[0].maxInFlight = '10')],
    ['a percentage above 100', (d) => (d['spec'].strategy.maxUnavailable = '150%')],
    ['a negative budget', (d) => (d['spec'].strategy.waves[0].failureBudget = -1)],
    ['a wave with count and percent', (d) => (d['spec'].strategy.waves[0].count = 5)],
    ['a last wave short of 100%', (d) => (d['spec'].strategy.waves[3].percent = 90)],
    ['two waves of one name', (d) => (d['spec'].strategy.waves[1].name = 'canary')],
    ['an unknown state', (d) => (d['spec'].state = 'Go')],
    ['a bake of days', (d) => (d['spec'].strategy.waves[0].bake = '2d')],
    [
      'a rolling-back onFailure without rollback',
      (d) => {
        d['spec'].strategy.onFailure = 'RollBackAll';
        delete d['spec'].rollback;
      },
    ],
    ['a rollback to the same release', (d) => (d['spec'].rollback.releaseRef.name = d['spec'].releaseRef.name)],
    ['an unknown field', (d) => (d['spec'].paused = true)],
    ['a name of 64 characters', (d) => (d['metadata'].name = 'a'.repeat(64))],
    ['a window start without leading zero', (d) => (d['spec'].schedule.windows[0].start = '9:00')],
    ['a wave name that is no DNS label', (d) => (d['spec'].strategy.waves[0].name = 'Canary')],
    ['two analysis metrics of one name', (d) => (d['spec'].strategy.analysis = { metrics: [METRIC, METRIC] })],
    [
      'an analysis address with credentials',
      (d) =>
        (d['spec'].strategy.analysis = {
          metrics: [{ ...METRIC, prometheus: { address: 'http://u:p@h', query: 'up' } }],
        }),
    ],
    [
      'an analysis without a success condition',
      (d) => (d['spec'].strategy.waves[0].analysis = { metrics: [{ name: 'm', prometheus: METRIC.prometheus }] }),
    ],
    ['a node readiness timeout of days', (d) => (d['spec'].strategy.nodeReadiness = { timeout: '2d' })],
  ])('refuse a rollout with %s', (_what, change) => {
    expect(check(edit(rolloutExample, change), ROLLOUT)).not.toEqual([]);
  });

  it.each<[string, (doc: Doc) => void]>([
    ['an upper-case digest', (d) => (d['spec'].artifacts[0].sha256 = 'A'.repeat(64))],
    ['an unknown architecture', (d) => (d['spec'].artifacts[0].arch = 'riscv64')],
    ['user information in the URL', (d) => (d['spec'].artifacts[0].downloadURL = 'https://u:p@h/a.tar.gz')],
    ['a fragment in the URL', (d) => (d['spec'].artifacts[0].downloadURL = 'https://h/a.tar.gz#x')],
    ['an architecture twice', (d) => (d['spec'].artifacts[1].arch = 'amd64')],
    ['no version', (d) => delete d['spec'].version],
    ['a version that is not semver', (d) => (d['spec'].version = '1.4')],
  ])('refuse a release with %s', (_what, change) => {
    expect(check(edit(releaseExamples[0] as Doc, change), RELEASE)).not.toEqual([]);
  });

  const state = (doc: Doc, value: string): Doc => edit(doc, (copy) => (copy['spec'].state = value));
  it.each<[string, string, boolean]>([
    ['Preview', 'Run', true],
    ['Run', 'Pause', true],
    ['Pause', 'Run', true],
    ['Run', 'RollBack', true],
    ['RollBack', 'Abort', true],
    ['Abort', 'RollBack', true],
    ['Run', 'Preview', false],
    ['Pause', 'Preview', false],
    ['RollBack', 'Run', false],
    ['RollBack', 'Pause', false],
    ['Abort', 'Run', false],
    ['Abort', 'Pause', false],
  ])('treat state %s → %s as allowed: %s', (from, to, allowed) => {
    const problems = check(state(rolloutExample, to), ROLLOUT, state(rolloutExample, from));
    expect(problems.length === 0, problems.join('; ')).toBe(allowed);
  });

  it('keep releaseRef mutable in Preview only, and the rollback release once rolling back', () => {
    const other = (doc: Doc): Doc => edit(doc, (copy) => (copy['spec'].releaseRef.name = 'aks-flex-node-v1.5.0'));
    expect(check(other(rolloutExample), ROLLOUT, rolloutExample)).toEqual([]);
    const running = state(rolloutExample, 'Run');
    expect(check(other(running), ROLLOUT, running)).toHaveLength(1);
    const rollingBack = state(rolloutExample, 'RollBack');
    const moved = edit(rollingBack, (copy) => (copy['spec'].rollback.releaseRef.name = 'aks-flex-node-v1.3.9'));
    expect(check(moved, ROLLOUT, rollingBack)).toHaveLength(1);
  });

  it('keep a release immutable but for its quarantine', () => {
    const release = releaseExamples[0] as Doc;
    const quarantined = edit(release, (copy) => (copy['spec'].quarantine = { quarantined: true, reason: 'halted' }));
    expect(check(quarantined, RELEASE, release)).toEqual([]);
    expect(check(release, RELEASE, quarantined)).toEqual([]);
    expect(
      check(
        edit(release, (copy) => (copy['spec'].version = '1.4.3')),
        RELEASE,
        release,
      ),
    ).toHaveLength(1);
    const swapped = edit(release, (copy) => (copy['spec'].artifacts[0].sha256 = 'c'.repeat(64)));
    expect(check(swapped, RELEASE, release)).toHaveLength(1);
  });
});
