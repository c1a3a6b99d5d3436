import type { Clock } from '../../../ports/common/clock.js';
import type { ControllerCluster, LeaseStore, WritePacing } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import { connectKubeHttp, type ConnectOptions } from '../../common/kubernetes/kube-connection.js';
import { loadWatchClient } from '../../common/kubernetes/kube-watch.js';
import type { InformerSettings } from './informer.js';
import { KubernetesControllerCluster } from './kubernetes-controller-cluster.js';
import { KubernetesLeaseStore } from './kubernetes-lease-store.js';
import { TokenBucket } from './token-bucket.js';

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

/**
 * The controller's connections to the API server (its watches have their own): as many as the
 * largest batch of creates (CREATE_BATCH_MAX in src/app/fleet/controller/reconcile-steps.ts), since an
 * HTTP/1.1 connection carries one request at a time. Four, a daemon's pool, would send a batch of
 * 64 four at a time.
 */
export const CONTROLLER_SOCKETS = 64;

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
  /**
   * Client-side pacing of the writes (`--kube-api-qps`, `--kube-api-burst`); default `null`, no
   * limit (a 429's Retry-After still pauses the writes). The process sets it from its flags.
   */
  readonly pacing?: WritePacing | null;
}

/**
 * The controller's cluster and Lease over one connection (kubeconfig chain, credentials, TLS,
 * proxy). The Lease's writes have a bucket of their own, as kube-controller-manager's leader
 * election has a client (and rate limiter) of its own: a backlog of creates must never hold a
 * renewal past the renew deadline.
 */
export async function connectController(
  options: ControllerConnection,
): Promise<{ readonly cluster: ControllerCluster; readonly leases: LeaseStore }> {
  const http = await connectKubeHttp(options.kubeconfig, {
    clock: options.clock,
    sockets: CONTROLLER_SOCKETS,
    ...options.connect,
  });
  const pacing = options.pacing ?? null;
  const cluster = new KubernetesControllerCluster({
    http,
    WatchClient: await loadWatchClient(),
    clock: options.clock,
    logger: options.logger,
    metrics: options.metrics,
    informers: { ...DEFAULT_INFORMER_SETTINGS, ...options.informers },
    namespace: options.eventsNamespace,
    instance: options.identity,
    pacer: new TokenBucket(options.clock, pacing),
  });
  const leases = new KubernetesLeaseStore(
    http,
    options.leaseNamespace,
    options.leaseName,
    options.metrics,
    new TokenBucket(options.clock, pacing),
  );
  return { cluster, leases };
}
