/** The AgentRelease status: Validated and Quarantined, written only when they change. */
import { describe, expect, it } from 'vitest';
import { planReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import { makeRelease } from './fixtures.js';

const NOW = Date.UTC(2025, 0, 6, 12, 0, 0);

describe('planReleaseStatus', () => {
  it('validates a release, and writes nothing more until something changes', () => {
    const release = makeRelease('agent-1.4.2', '1.4.2');
    const update = planReleaseStatus(release, NOW);
    expect(update?.status.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Validated', 'True', 'Valid'],
      ['Quarantined', 'False', 'NotQuarantined'],
    ]);
    expect(planReleaseStatus({ ...release, status: update?.status }, NOW + 60_000)).toBeNull();
  });

  it('mirrors a quarantine, keeping the time the other condition last changed', () => {
    const release = makeRelease('agent-1.4.2', '1.4.2');
    const first = planReleaseStatus(release, NOW)!;
    const quarantined = {
      ...release,
      spec: { ...(release.spec as object), quarantine: { quarantined: true, reason: 'halted by rollout fleet' } },
      status: first.status,
    };
    const update = planReleaseStatus(quarantined, NOW + 60_000)!;
    expect(update.status.conditions[1]).toMatchObject({
      type: 'Quarantined',
      status: 'True',
      message: 'halted by rollout fleet',
    });
    expect(update.status.conditions[1]?.lastTransitionTime).toBe('2025-01-06T12:01:00Z');
    expect(update.status.conditions[0]?.lastTransitionTime).toBe('2025-01-06T12:00:00Z');
  });

  it('says what is wrong with an invalid release', () => {
    const update = planReleaseStatus({ ...makeRelease('bad', '1.0.0'), spec: { version: 'one' } }, NOW);
    expect(update?.status.conditions[0]).toMatchObject({
      type: 'Validated',
      status: 'False',
      reason: 'E_RELEASE_VERSION',
    });
  });
});
