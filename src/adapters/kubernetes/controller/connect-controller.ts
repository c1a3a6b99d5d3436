import type { Clock } from '../../../ports/clock.js';
import type { ControllerCluster, LeaseStore } from '../../../ports/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/controller-metrics.js';
import type { Logger } from '../../../ports/logger.js';
import { connectKubeHttp, type ConnectOptions } from '../kube-connection.js';
import { loadWatchClient } from '../kube-watch.js';
import type { InformerSettings } from './informer.js';
import { KubernetesControllerCluster } from './kubernetes-controller-cluster.js';
import { KubernetesLeaseStore } from './kubernetes-lease-store.js';

export const DEFAULT_INFORMER_SETTINGS: InformerSettings = {
  pageSize: 500,
  watchTimeoutMinSeconds: 300,
  watchTimeoutMaxSeconds: 600,
  // Servers send a bookmark about every minute on a quiet watch; three missed ones mean it is dead.
  idleTimeoutMs: 180_000,
  retryDelayMs: 1_000,
  retryDelayMaxMs: 30_000,
  unauthorized: { attempts: 5, windowMs: 180_000 },
  random: Math.random,
};

export interface ControllerConnection {
  readonly kubeconfig: string | null;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly eventsNamespace: string;
  readonly identity: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly informers?: Partial<InformerSettings>;
  readonly connect?: ConnectOptions;
}

/** The controller's cluster and Lease over one connection (kubeconfig chain, credentials, TLS, proxy). */
export async function connectController(
  options: ControllerConnection,
): Promise<{ readonly cluster: ControllerCluster; readonly leases: LeaseStore }> {
  const http = await connectKubeHttp(options.kubeconfig, { clock: options.clock, ...options.connect });
  const cluster = new KubernetesControllerCluster({
    http,
    WatchClient: await loadWatchClient(),
    clock: options.clock,
    logger: options.logger,
    metrics: options.metrics,
    informers: { ...DEFAULT_INFORMER_SETTINGS, ...options.informers },
    namespace: options.eventsNamespace,
    instance: options.identity,
  });
  const leases = new KubernetesLeaseStore(http, options.leaseNamespace, options.leaseName, options.metrics);
  return { cluster, leases };
}
