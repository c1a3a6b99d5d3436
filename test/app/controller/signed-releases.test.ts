/**
 * The controller checks first: with a `trust` section, every AgentRelease is verified against a
 * real go-tuf repository on loopback before a rollout dispatches it, and the verdict lives in the
 * release's status (the in-memory API server plays the cluster).
 */
import { describe, expect, it } from 'vitest';
import { REVERIFY_MS, TRUST_RETRY_MS } from '../../../src/app/fleet/controller/release-verifier.js';
import { RELEASE, ROLLOUT } from './controller-fixtures.js';
import {
  releaseObject,
  releaseReady,
  signedController,
  signedRepository,
  targetPathOf,
  validated,
} from './signed-release-fixtures.js';

const eventsOf = (controller: ReturnType<typeof signedController>, reason: string) =>
  controller.server.writes.filter((write) => write.kind === 'event' && write.reason === reason);

describe('the controller under signed releases', () => {
  it('a release signed as it says is Validated=True, and its rollout dispatches it', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    const reconciler = controller.start();
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toEqual({
      outcome: 'applied',
      requeueAfterMs: REVERIFY_MS,
    });
    expect(validated(controller.releaseStatus())).toEqual(['True', 'Valid']);
    expect(controller.releaseStatus()?.signed?.artifacts.map((artifact) => artifact.targetPath)).toEqual([
      targetPathOf('amd64'),
      targetPathOf('arm64'),
    ]);
    controller.sync();
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'applied' });
    expect(controller.server.list('operations')).toHaveLength(3);
    expect(releaseReady(controller.rolloutStatus())).toEqual(['True', 'Resolved']);
  });

  it.each([
    ['a digest that is not the signed one', (a: { arch: string }) => ({ ...a, sha256: 'f'.repeat(64) })],
    [
      'a target the metadata does not sign',
      (a: { downloadURL: string }) => ({ ...a, downloadURL: `${a.downloadURL}.old` }),
    ],
    [
      'a URL outside the targets URL',
      (a: { arch: string }) => ({ ...a, downloadURL: `https://elsewhere.example/${a.arch}.tar.gz` }),
    ],
  ])('a release with %s is Validated=False, reason Untrusted, and creates no child', async (_name, change) => {
    const { repo, mirror } = await signedRepository();
    const release = releaseObject(mirror, (artifact) =>
      artifact.arch === 'arm64' ? change(artifact as never) : artifact,
    );
    const controller = signedController(repo, mirror, release);
    const reconciler = controller.start();
    await reconciler.reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['False', 'Untrusted']);
    expect(controller.releaseStatus()?.signed).toBeUndefined();
    expect(eventsOf(controller, 'Untrusted').map((write) => write.name)).toEqual([RELEASE]);
    controller.sync();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toEqual([]);
    expect(releaseReady(controller.rolloutStatus())).toEqual(['False', 'ReleaseUntrusted']);
  });

  it('a release not verified yet dispatches nothing', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await controller.start().reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toEqual([]);
    expect(releaseReady(controller.rolloutStatus())).toEqual(['False', 'ReleaseUnverified']);
  });

  it('expired metadata is Untrusted: nothing the repository says can be believed', async () => {
    const { repo, mirror } = await signedRepository();
    repo.expire('timestamp', new Date(Date.now() - 3_600_000));
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await controller.start().reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['False', 'Untrusted']);
  });
});

describe('an unreachable repository', () => {
  it('leaves a verified release verified, retries with a growing backoff, and its rollout still dispatches', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    const reconciler = controller.start();
    await reconciler.reconcile(`release/${RELEASE}`);
    const verified = controller.releaseStatus();
    await mirror.close();
    controller.sync();
    controller.clock.advance(REVERIFY_MS);
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toEqual({
      outcome: 'applied',
      requeueAfterMs: TRUST_RETRY_MS,
    });
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toEqual({
      outcome: 'applied',
      requeueAfterMs: 2 * TRUST_RETRY_MS,
    });
    expect(controller.releaseStatus()).toEqual(verified);
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toHaveLength(3);
  });

  it('before any verdict is Validated=Unknown, and nothing is dispatched', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await mirror.close();
    const reconciler = controller.start();
    await reconciler.reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['Unknown', 'Unverified']);
    controller.sync();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toEqual([]);
  });

  it('a restarted controller plans from the verdict in the status, without asking the repository', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await controller.start().reconcile(`release/${RELEASE}`);
    await mirror.close();
    controller.sync();
    await controller.start().reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toHaveLength(3);
  });
});

describe('verifying again', () => {
  it('notices a target removed from the metadata, within REVERIFY_MS', async () => {
    const { repo, mirror } = await signedRepository();
    const controller = signedController(repo, mirror, releaseObject(mirror));
    const reconciler = controller.start();
    await reconciler.reconcile(`release/${RELEASE}`);
    repo.removeTarget(targetPathOf('arm64'));
    repo.publish();
    controller.sync();
    controller.clock.advance(REVERIFY_MS - 1_000);
    await reconciler.reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['True', 'Valid']);
    controller.clock.advance(1_000);
    await reconciler.reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['False', 'Untrusted']);
    controller.sync();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    expect(controller.server.list('operations')).toEqual([]);
  });
});

describe('metadata about to expire', () => {
  it('within 7 days: a Warning Event on the release and the metric say so', async () => {
    const { repo, mirror } = await signedRepository(3);
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await controller.start().reconcile(`release/${RELEASE}`);
    expect(validated(controller.releaseStatus())).toEqual(['True', 'Valid']);
    expect(eventsOf(controller, 'TrustMetadataExpiring').map((write) => write.name)).toEqual([
      RELEASE,
      RELEASE,
      RELEASE,
      RELEASE,
    ]);
    expect(controller.metrics.roles.map((role) => [role.role, role.expiringSoon])).toEqual([
      ['root', true],
      ['timestamp', true],
      ['snapshot', true],
      ['targets', true],
    ]);
  });

  it('further off: no Event, and the metric says not yet', async () => {
    const { repo, mirror } = await signedRepository(30);
    const controller = signedController(repo, mirror, releaseObject(mirror));
    await controller.start().reconcile(`release/${RELEASE}`);
    expect(eventsOf(controller, 'TrustMetadataExpiring')).toEqual([]);
    expect(controller.metrics.roles.map((role) => role.expiringSoon)).toEqual([false, false, false, false]);
    expect(controller.metrics.roles.every((role) => role.expiresMs !== null)).toBe(true);
  });
});
