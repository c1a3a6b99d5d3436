/**
 * The controller under signed releases, for the app-layer tests: a go-tuf repository publishing
 * release 1.4.2 for amd64 and arm64 on loopback, and the Reconciler over the in-memory API
 * server with the real TUF client (TufReleaseTrust over the hardened HTTP) in a temp dir.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { AxiosArtifactSource } from '../../../src/adapters/common/http/axios-artifact-source.js';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { TufReleaseTrust } from '../../../src/adapters/common/tuf/tuf-release-trust.js';
import { ClusterCache } from '../../../src/app/fleet/controller/cluster-cache.js';
import { Reconciler } from '../../../src/app/fleet/controller/reconciler.js';
import type { TufTrustSettings } from '../../../src/domain/common/trust/trust-settings.js';
import type { ReleaseObject } from '../../../src/domain/fleet/order/snapshot.js';
import type { AgentReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import type { ControllerMetrics, TrustRoleExpiry } from '../../../src/ports/fleet/controller-metrics.js';
import { exampleNodes } from '../../domain/rollout/example-cluster.js';
import { serveTufRepo, type TufMirror } from '../../support/tuf/serve-tuf-repo.js';
import { TufTestRepo } from '../../support/tuf/tuf-repo-tool.js';
import { quietLogger, quietMetrics, RELEASE, ROLLOUT, rolloutObject, runSpec } from './controller-fixtures.js';
import { FakeApiServer } from './fake-api-server.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export const VERSION = '1.4.2';
export const ARCHES = ['amd64', 'arm64'] as const;
export const targetPathOf = (arch: string): string => `agent/${VERSION}/agent-${arch}.tar.gz`;
const contentOf = (arch: string): string => `agent ${VERSION} for ${arch}`;
export const sha256Of = (arch: string): string => createHash('sha256').update(contentOf(arch)).digest('hex');

/** A repository (2-of-3 targets keys) that signs the release for both architectures, on loopback. */
export async function signedRepository(expiresDays = 365): Promise<{ repo: TufTestRepo; mirror: TufMirror }> {
  const repo = TufTestRepo.inTempDir({ targetsKeys: 3, targetsThreshold: 2, expiresDays });
  cleanups.push(() => repo.remove());
  for (const arch of ARCHES)
    repo.addTarget(targetPathOf(arch), { content: contentOf(arch) }, { custom: { version: VERSION, arch } });
  repo.publish();
  const mirror = await serveTufRepo(repo.dir);
  cleanups.push(() => mirror.close());
  return { repo, mirror };
}

/** The AgentRelease as a person writes it: each artifact under the targets URL, with its digest. */
export function releaseObject(
  mirror: TufMirror,
  change: (artifact: { arch: string; downloadURL: string; sha256: string }) => object = (artifact) => artifact,
): ReleaseObject {
  const artifacts = ARCHES.map((arch) =>
    change({ arch, downloadURL: `${mirror.targetsUrl}/${targetPathOf(arch)}`, sha256: sha256Of(arch) }),
  );
  return {
    name: RELEASE,
    uid: `uid-${RELEASE}`,
    generation: 1,
    resourceVersion: '1',
    spec: { version: VERSION, artifacts },
    status: {},
  };
}

/** Keeps the trusted roles as last reported; the rest goes nowhere. */
export class TrustMetrics implements ControllerMetrics {
  roles: readonly TrustRoleExpiry[] = [];
  rolloutObserved = quietMetrics.rolloutObserved;
  rolloutForgotten = quietMetrics.rolloutForgotten;
  halted = quietMetrics.halted;
  reconciled = quietMetrics.reconciled;
  apiRequest = quietMetrics.apiRequest;
  leading = quietMetrics.leading;
  trustMetadataObserved(roles: readonly TrustRoleExpiry[]): void {
    this.roles = roles;
  }
}

export interface SignedController {
  readonly server: FakeApiServer;
  readonly cache: ClusterCache;
  readonly clock: MemoryClock;
  readonly metrics: TrustMetrics;
  /** A controller process: a new one starts with nothing in memory, as after a restart. */
  readonly start: () => Reconciler;
  /** Plays the informers: the cache catches up with the server. */
  readonly sync: () => void;
  readonly releaseStatus: () => AgentReleaseStatus | undefined;
  readonly rolloutStatus: () => AgentRolloutStatus | undefined;
}

/** Three nodes, `release` and a one-wave rollout of it, over a controller that trusts `repo`'s first root. */
export function signedController(repo: TufTestRepo, mirror: TufMirror, release: ReleaseObject): SignedController {
  const home = mkdtempSync(join(tmpdir(), 'controller-trust-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const rootFile = join(home, 'root.json');
  writeFileSync(rootFile, repo.trustedRoot());
  const settings: TufTrustSettings = {
    mode: 'tuf',
    rootFile,
    metadataUrl: `${mirror.metadataUrl}/`,
    targetsUrl: `${mirror.targetsUrl}/`,
    mirrors: [],
    cacheDir: join(home, 'trust'),
  };
  // The wall clock is today's: the signed expiries are real dates.
  const clock = new MemoryClock(Date.now());
  const server = new FakeApiServer(clock);
  for (const node of exampleNodes(3).values()) server.put('nodes', node);
  server.put('releases', release);
  server.put('rollouts', rolloutObject(ROLLOUT, runSpec()));
  const cache = new ClusterCache();
  server.listInto(cache);
  const metrics = new TrustMetrics();
  const start = (): Reconciler => {
    const releaseTrust = new TufReleaseTrust(new AxiosArtifactSource(), {
      metadataUrl: settings.metadataUrl,
      cacheDir: settings.cacheDir,
      rootFile,
      timeoutMs: 5_000,
      idleTimeoutMs: 2_000,
      clock,
    });
    const logger = quietLogger();
    const trust = { settings, releaseTrust };
    return new Reconciler({ cluster: server.client('controller'), cache, clock, logger, metrics, trust });
  };
  return {
    server,
    cache,
    clock,
    metrics,
    start,
    sync: () => server.listInto(cache),
    releaseStatus: () => server.get('releases', RELEASE)?.status as AgentReleaseStatus | undefined,
    rolloutStatus: () => server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined,
  };
}

/** The Validated condition as `[status, reason]`. */
export function validated(status: AgentReleaseStatus | undefined): [string, string] | undefined {
  const condition = status?.conditions.find((entry) => entry.type === 'Validated');
  return condition === undefined ? undefined : [condition.status, condition.reason];
}

export function releaseReady(status: AgentRolloutStatus | undefined): [string, string] | undefined {
  const condition = status?.conditions.find((entry) => entry.type === 'ReleaseReady');
  return condition === undefined ? undefined : [condition.status, condition.reason];
}
