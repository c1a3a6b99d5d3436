/**
 * A rollout that quarantined its own release says so once (ReleaseQuarantined, on the rollout and
 * on the release) and is not told again, as if by someone else, when its ReleaseReady condition
 * turns False for that quarantine; a quarantine someone else made is still ReleaseUnavailable.
 */
import { describe, expect, it } from 'vitest';
import { eventReasons, exampleCluster, finish, later, operationsOf, reconcile, strategy } from './example-cluster.js';

const TWO_WAVES = strategy({
  waves: [
    { name: 'canary', count: 2, maxInFlight: 2 },
    { name: 'rest', percent: 100, maxInFlight: 4 },
  ],
});

describe('the events of a self-quarantine', () => {
  it('ReleaseQuarantined once, and no ReleaseUnavailable when the quarantine shows', () => {
    const world = exampleCluster(12, TWO_WAVES);
    reconcile(world);
    const [first, second] = operationsOf(world, 'canary');
    finish(world, first!, 'DaemonFailed');
    const reasons: string[] = [];
    for (let step = 0; step < 4; step += 1) {
      later(world);
      if (step === 1) finish(world, second!, 'Succeeded');
      reasons.push(...eventReasons(reconcile(world)));
    }
    expect(world.releases.get('agent-1.4.2')?.spec).toMatchObject({ quarantine: { quarantined: true } });
    expect(reasons.filter((reason) => reason === 'ReleaseQuarantined')).toHaveLength(2);
    expect(reasons).not.toContain('ReleaseUnavailable');
  });

  it('a quarantine someone else made halts with ReleaseUnavailable', () => {
    const world = exampleCluster(8, TWO_WAVES);
    const release = world.releases.get('agent-1.4.2')!;
    world.releases.set(release.name, {
      ...release,
      spec: { ...(release.spec as object), quarantine: { quarantined: true, reason: 'CVE' } },
    });
    expect(eventReasons(reconcile(world))).toContain('ReleaseUnavailable');
  });
});
