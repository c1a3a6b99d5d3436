/**
 * What the KubernetesOperationStore tests on a real kube-apiserver share: a store connected as a
 * node connects (KubeClient.connect with that node's kubeconfig), and its watch as a Taker that
 * the test file's afterEach stops with stopStreams.
 */
import { KubeClient } from '../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { type RealCluster, Taker } from '../support/kube/real-cluster.js';

/** Short watches, so re-watches (and the bookmark each one ends with) happen within a case. */
const STREAM = {
  watchTimeoutMinSeconds: 3,
  watchTimeoutMaxSeconds: 4,
  idleTimeoutMs: 30_000,
  retryDelayMs: 200,
  retryDelayMaxMs: 1_000,
  listPageSize: 2,
};
export const DELIVERY_MS = 20_000;

const stops: AbortController[] = [];

/** Stops every watch streamOf started; for afterEach. */
export function stopStreams(): void {
  for (const stop of stops.splice(0)) stop.abort();
}

export async function storeFor(cluster: RealCluster, machine: string): Promise<KubernetesOperationStore> {
  const identity = await cluster.node(machine);
  const client = await KubeClient.connect(identity.kubeconfigPath);
  return new KubernetesOperationStore({
    client,
    machineName: machine,
    clock: new SystemClock(),
    logger: new RecordingLogger(),
    stream: STREAM,
  });
}

export function streamOf(store: KubernetesOperationStore): Taker<AgentUpgradeRequest> {
  const stop = new AbortController();
  stops.push(stop);
  return new Taker(store.watch(stop.signal)[Symbol.asyncIterator]());
}

export const names = (requests: readonly AgentUpgradeRequest[]): string[] =>
  requests.map((r) => r.operation.name).sort();
