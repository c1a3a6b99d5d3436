// connectController from a kubeconfig file pointing at the fake API server: one connection that
// gives a working cluster (informers, writes, Events as this replica) and the Lease store.

import { afterEach, describe, expect, it } from 'vitest';
import { connectController } from '../../../../src/adapters/fleet/kubernetes/connect-controller.js';
import { MemoryClock } from '../../../../src/adapters/common/memory/memory-clock.js';
import { ClusterError } from '../../../../src/domain/common/port-errors.js';
import type { ControllerCluster, InformerEvent, LeaseStore } from '../../../../src/ports/fleet/controller-cluster.js';
import { startFakeApiServer, type FakeApiServer } from '../../../support/kube/fake-apiserver.js';
import { writeKubeconfig } from '../../../support/kube/machine-operations.js';
import { makeScratch } from '../../../support/real-tree.js';
import { RecordingLogger } from '../../../support/recording-logger.js';
import {
  CONTROLLER_NAMESPACE,
  EventLog,
  RecordingMetrics,
  releaseInput,
  rolloutEvent,
  rolloutInput,
  rolloutStatus,
  settled,
} from './controller-harness.js';

const LEASE = 'agent-upgrade-controller';
const RECORD = { holder: 'replica-b', leaseDurationSeconds: 15, acquireMs: 1_000, renewMs: 2_000, transitions: 0 };

let fake: FakeApiServer | undefined;
let cluster: ControllerCluster | undefined;
let scratch: ReturnType<typeof makeScratch> | undefined;
let stop = new AbortController();
let running: Promise<void> | undefined;
afterEach(async () => {
  stop.abort();
  await settled(running);
  cluster?.close();
  await fake?.close();
  scratch?.cleanup();
  [fake, cluster, scratch, running] = [undefined, undefined, undefined, undefined];
  stop = new AbortController();
});

/** A fake (refusing the kubeconfig's token when `tokens` says so) and the controller connected to it. */
async function connected(
  tokens?: readonly string[],
): Promise<{ server: FakeApiServer; cluster: ControllerCluster; leases: LeaseStore; metrics: RecordingMetrics }> {
  const server = (fake = await startFakeApiServer({ namespaces: [CONTROLLER_NAMESPACE], ...(tokens && { tokens }) }));
  scratch = makeScratch('connect-controller-');
  const metrics = new RecordingMetrics();
  const connection = await connectController({
    kubeconfig: writeKubeconfig(scratch.root, server.origin),
    leaseNamespace: CONTROLLER_NAMESPACE,
    leaseName: LEASE,
    eventsNamespace: 'default',
    identity: 'replica-b',
    clock: new MemoryClock(),
    logger: new RecordingLogger(),
    metrics,
    informers: { pageSize: 1, retryDelayMs: 10, retryDelayMaxMs: 20 },
    connect: { env: {} },
  });
  cluster = connection.cluster;
  return { server, cluster: connection.cluster, leases: connection.leases, metrics };
}

describe('connectController', () => {
  it('returns a cluster that informs and writes, and a Lease store, over one connection', async () => {
    const { server, cluster, leases, metrics } = await connected();
    server.setNode('n-1', {});
    server.setNode('n-2', {});
    server.releases.create(releaseInput('rel'));
    const rollout = server.rollouts.create(rolloutInput('fleet', 'rel'));

    const log = new EventLog<InformerEvent>();
    running = cluster.inform(log.push, stop.signal);
    const nodes = await log.next((event) => event.type === 'replace' && event.kind === 'nodes');
    expect(nodes.type === 'replace' && nodes.objects.map((node) => node.name)).toEqual(['n-1', 'n-2']);
    // The partial informer settings were merged over the defaults: one object per page.
    expect(metrics.requests.filter((sample) => sample.resource === 'nodes' && sample.verb === 'list')).toHaveLength(2);

    const version = rollout.metadata.resourceVersion ?? '';
    expect(await cluster.updateRolloutStatus('fleet', version, rolloutStatus('Progressing', 0))).toBe('updated');
    await log.next((event) => event.type === 'upsert' && event.kind === 'rollouts');
    await cluster.recordEvent(rolloutEvent('fleet', rollout.metadata.uid ?? ''), Date.UTC(2025, 0, 1));
    expect(server.events()[0]).toMatchObject({ metadata: { namespace: 'default' }, reportingInstance: 'replica-b' });

    const created = await leases.create(RECORD);
    expect(created).toMatchObject({ kind: 'written', lease: { lease: RECORD } });
    expect(server.lease(CONTROLLER_NAMESPACE, LEASE)?.spec.holderIdentity).toBe('replica-b');
    expect(await leases.get()).toEqual(created.kind === 'written' ? created.lease : null);
  });

  it('fails writes and Lease reads with the ClusterError unauthorized when the token is refused', async () => {
    const { cluster, leases, metrics } = await connected(['someone-elses-token']);
    const write = await cluster
      .quarantineRelease('rel', { quarantined: true, reason: 'x' })
      .catch((error: unknown) => error);
    expect(write).toBeInstanceOf(ClusterError);
    expect(write).toMatchObject({ status: 401, code: 'unauthorized' });
    const read = await leases.get().catch((error: unknown) => error);
    expect(read).toBeInstanceOf(ClusterError);
    expect(read).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(metrics.requests).toEqual([
      { verb: 'patch', resource: 'agentreleases', code: 401 },
      { verb: 'get', resource: 'leases', code: 401 },
    ]);
  });
});
