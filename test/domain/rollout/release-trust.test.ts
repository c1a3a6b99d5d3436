/**
 * Signed releases in the fleet's domain: the verdict as the AgentRelease status records it, and
 * the planner, which then dispatches only a release whose status says it was verified.
 */
import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../../src/domain/common/digest.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { PlannerMemo } from '../../../src/domain/fleet/order/planner-memo.js';
import type { ReleaseObject } from '../../../src/domain/fleet/order/snapshot.js';
import { planReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { TrustCheck } from '../../../src/domain/fleet/trust/release-signature.js';
import { metadataUntrusted, type ReleaseVerdict } from '../../../src/domain/fleet/trust/release-verdict.js';
import { creates, exampleCluster } from './example-cluster.js';
import { makeRelease } from './fixtures.js';

const NOW = Date.UTC(2025, 0, 6, 12, 0, 0);
const RELEASE = 'agent-1.4.2';

/** The verdict of a publisher that signed the fixture release as it says (fixtures.ts digests). */
function signedVerdict(release: ReleaseObject): ReleaseVerdict {
  const spec = release.spec as { version: string; artifacts: { arch: 'amd64' | 'arm64'; sha256: string }[] };
  return {
    kind: 'signed',
    signed: {
      version: spec.version,
      artifacts: spec.artifacts.map(({ arch, sha256 }) => ({
        arch,
        targetPath: `agent/${spec.version}/agent-${arch}.tar.gz`,
        sha256: sha256 as Sha256,
      })),
    },
  };
}

const UNTRUSTED: TrustCheck = {
  kind: 'untrusted',
  code: 'E_UNTRUSTED',
  mismatches: [{ arch: 'amd64', mismatch: 'NotSigned', message: 'artifact amd64: not signed' }],
  message: 'artifact amd64: not signed',
};
const UNREACHABLE: TrustCheck = { kind: 'unavailable', code: 'E_TIMEOUT', message: 'timed out' };

/** The release with the status `check` gives it (applied as the API server would). */
function judged(release: ReleaseObject, check: TrustCheck | null, nowMs = NOW): ReleaseObject {
  const update = planReleaseStatus(release, nowMs, check);
  return update === null ? release : { ...release, status: update.status };
}

const validated = (release: ReleaseObject) => {
  const status = release.status as { conditions: { type: string; status: string; reason: string }[] };
  const condition = status.conditions.find((entry) => entry.type === 'Validated');
  return [condition?.status, condition?.reason];
};

describe('the release status under signed releases', () => {
  it('a signed release is Validated=True with what was verified, and is written once', () => {
    const release = makeRelease(RELEASE, '1.4.2');
    const verdict = signedVerdict(release);
    const signed = judged(release, verdict);
    expect(validated(signed)).toEqual(['True', 'Valid']);
    expect((signed.status as { signed?: unknown }).signed).toEqual(verdict.kind === 'signed' && verdict.signed);
    expect(planReleaseStatus(signed, NOW + 60_000, verdict)).toBeNull();
  });

  it('an unsigned or mismatched release is Validated=False, reason Untrusted, with no signed record', () => {
    const untrusted = judged(makeRelease(RELEASE, '1.4.2'), UNTRUSTED);
    expect(validated(untrusted)).toEqual(['False', 'Untrusted']);
    expect((untrusted.status as { signed?: unknown }).signed).toBeUndefined();
    expect(validated(judged(makeRelease(RELEASE, '1.4.2'), metadataUntrusted('expired')))).toEqual([
      'False',
      'Untrusted',
    ]);
  });

  it('an unreachable repository leaves a verdict as it was, and is Unknown before the first', () => {
    const release = makeRelease(RELEASE, '1.4.2');
    const signed = judged(release, signedVerdict(release));
    expect(planReleaseStatus(signed, NOW + 60_000, UNREACHABLE)).toBeNull();
    const untrusted = judged(release, UNTRUSTED);
    expect(planReleaseStatus(untrusted, NOW + 60_000, UNREACHABLE)).toBeNull();
    expect(validated(judged(release, UNREACHABLE))).toEqual(['Unknown', 'Unverified']);
  });

  it('an unreachable repository carries a verdict over a quarantine (a new generation of the same bytes)', () => {
    const release = makeRelease(RELEASE, '1.4.2');
    const signed = judged(release, signedVerdict(release));
    const spec = { ...(release.spec as object), quarantine: { quarantined: true, reason: 'halted' } };
    const next = judged({ ...signed, generation: 2, spec }, UNREACHABLE);
    expect(validated(next)).toEqual(['True', 'Valid']);
    expect((next.status as { observedGeneration: number }).observedGeneration).toBe(2);
  });

  it('without signed releases the status is what it always was', () => {
    const release = makeRelease(RELEASE, '1.4.2');
    expect(planReleaseStatus(release, NOW, null)).toEqual(planReleaseStatus(release, NOW));
  });
});

/** A rollout over 8 nodes whose forward release has the status `check` gives it. */
function signedWorld(check: TrustCheck | null) {
  const world = exampleCluster(8);
  const release = world.releases.get(RELEASE) as ReleaseObject;
  if (check !== null) world.releases.set(RELEASE, judged(release, check));
  return world;
}

const releaseReady = (plan: ReturnType<typeof planRollout>) =>
  plan.status.conditions.find((condition) => condition.type === 'ReleaseReady');

describe('the planner under signed releases', () => {
  it('dispatches a release Validated=True for its generation with a record of this very spec', () => {
    const world = signedWorld(null);
    const release = world.releases.get(RELEASE) as ReleaseObject;
    world.releases.set(RELEASE, judged(release, signedVerdict(release)));
    const plan = planRollout({ ...world.snapshot(), signedReleasesOnly: true }, world.nowMs);
    expect(creates(plan)).toHaveLength(2);
    expect(releaseReady(plan)).toMatchObject({ status: 'True' });
  });

  it.each<[string, TrustCheck | null, string]>([
    ['judged Untrusted', UNTRUSTED, 'ReleaseUntrusted'],
    ['never verified', null, 'ReleaseUnverified'],
    ['not verified yet (the repository was unreachable)', UNREACHABLE, 'ReleaseUnverified'],
  ])('creates nothing for a release %s: ReleaseReady=False, %s', (_name, check, reason) => {
    const world = signedWorld(check);
    const plan = planRollout({ ...world.snapshot(), signedReleasesOnly: true }, world.nowMs);
    expect(creates(plan)).toEqual([]);
    expect(releaseReady(plan)).toMatchObject({ status: 'False', reason });
  });

  it('a verdict of an older generation, or of other bytes, is no verdict', () => {
    const world = signedWorld(null);
    const release = world.releases.get(RELEASE) as ReleaseObject;
    const signed = judged(release, signedVerdict(release));
    world.releases.set(RELEASE, { ...signed, generation: 2 });
    const older = planRollout({ ...world.snapshot(), signedReleasesOnly: true }, world.nowMs);
    expect(releaseReady(older)).toMatchObject({ status: 'False', reason: 'ReleaseUnverified' });
    const spec = release.spec as { artifacts: { sha256: string }[] };
    const otherBytes = { ...spec, artifacts: spec.artifacts.map((a) => ({ ...a, sha256: 'c'.repeat(64) })) };
    world.releases.set(RELEASE, { ...signed, spec: otherBytes });
    const other = planRollout({ ...world.snapshot(), signedReleasesOnly: true }, world.nowMs);
    expect(creates(other)).toEqual([]);
  });

  it('without signed releases the status is not consulted', () => {
    const world = signedWorld(UNTRUSTED);
    expect(creates(planRollout(world.snapshot(), world.nowMs))).toHaveLength(2);
  });

  it('plans the same with the memo as without it while the verdict changes', () => {
    const world = signedWorld(UNREACHABLE);
    const memo = new PlannerMemo();
    const release = world.releases.get(RELEASE) as ReleaseObject;
    for (const check of [UNREACHABLE, UNTRUSTED, signedVerdict(release), UNTRUSTED]) {
      world.releases.set(RELEASE, judged(release, check));
      const snapshot = { ...world.snapshot(), signedReleasesOnly: true };
      expect(planRollout(snapshot, world.nowMs, memo)).toEqual(planRollout(snapshot, world.nowMs));
    }
  });
});
