import { connectController } from '../../../adapters/fleet/kubernetes/connect-controller.js';
import { PrometheusMetrics } from '../../../adapters/fleet/metrics/prometheus-metrics.js';
import { startMetricsServer, type MetricsServer } from '../../../adapters/fleet/metrics/metrics-server.js';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import { boundHeapGrowth } from '../../../adapters/common/runtime/heap-growth.js';
import { LazyArtifactSource } from '../../../adapters/common/http/lazy-artifact-source.js';
import { TufReleaseTrust } from '../../../adapters/common/tuf/tuf-release-trust.js';
import { PrometheusQuery } from '../../../adapters/fleet/analysis/prometheus-query.js';
import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { TrustError } from '../../../domain/common/port-errors.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ControllerProcessSettings } from '../controller/controller-options.js';
import { CONTROLLER_CONFIG_DEFAULTS, type ControllerConfig } from '../controller/controller-config.js';
import type { RolloutController } from '../controller/rollout-controller.js';
import { translatePortError } from '../../common/translate-port-error.js';
import { createController } from './create-controller.js';
import { messageOf } from '../../../domain/common/message-of.js';

export interface HostController {
  readonly controller: RolloutController;
  /** Where `/metrics`, `/healthz` and `/readyz` are served; `null` with `--metrics-address off`. */
  readonly metricsAddress: { readonly host: string; readonly port: number } | null;
  close(): Promise<void>;
}

/**
 * The real controller process: the system clock, Prometheus metrics and their listener, the
 * cluster connection and, with a `trust` section in `config`, the client of the trusted
 * repository, composed by createController. A kubeconfig that cannot be used, credentials that
 * cannot be obtained, or a metrics port that cannot be bound are failures with a code, and
 * nothing is left running.
 */
export async function openHostController(
  settings: ControllerProcessSettings,
  logger: Logger,
  config: ControllerConfig = CONTROLLER_CONFIG_DEFAULTS,
): Promise<Result<HostController>> {
  // A long-lived process whose busy minutes allocate a fleet's snapshot per plan (heap-growth.ts).
  boundHeapGrowth();
  const clock = new SystemClock();
  const metrics = new PrometheusMetrics({
    onError: (error, method) => logger.warn({ method }, `A metric was not recorded: ${messageOf(error)}`),
  });
  const releaseTrust = openReleaseTrust(config, clock);
  if (!releaseTrust.ok) return releaseTrust;
  const { trust } = config;
  let connection: Awaited<ReturnType<typeof connectController>>;
  try {
    connection = await connectController({
      kubeconfig: settings.kubeconfig,
      ...(settings.context === null ? {} : { connect: { context: settings.context } }),
      leaseNamespace: settings.namespace,
      leaseName: settings.leaseName,
      eventsNamespace: settings.eventsNamespace,
      identity: settings.leader.identity,
      pacing: settings.writePacing,
      clock,
      logger: logger.child({ component: 'cluster' }),
      metrics,
    });
  } catch (error) {
    const failure = translatePortError(error);
    if (failure !== null) return { ok: false, failure };
    return fail('E_CONFIG', `the cluster connection cannot be set up: ${messageOf(error)}`);
  }
  // The waves' analyses query Prometheus over the same hardened HTTP.
  const metricsQuery = new PrometheusQuery(new LazyArtifactSource());
  const controller = createController({
    settings: { ...settings, trust },
    logger,
    ports: { ...connection, metrics, clock, releaseTrust: releaseTrust.value, metricsQuery },
  });
  let server: MetricsServer | null = null;
  if (settings.metrics !== null) {
    try {
      server = await startMetricsServer({ ...settings.metrics, metrics, ready: () => controller.ready });
    } catch (error) {
      connection.cluster.close();
      return fail('E_CONFIG', `the metrics listener cannot be started: ${messageOf(error)}`);
    }
  }
  return ok({
    controller,
    metricsAddress: server?.address ?? null,
    close: async () => {
      await server?.close();
      connection.cluster.close();
    },
  });
}

/**
 * The client of the trusted repository (`trust` in `--config`), or null without one. A root that
 * cannot be trusted would leave every release Untrusted, so it is refused here, before anything
 * starts: E_CONFIG naming the file.
 */
function openReleaseTrust(config: ControllerConfig, clock: SystemClock): Result<TufReleaseTrust | null> {
  const { trust, artifact } = config;
  if (trust === null) return ok(null);
  // Metadata travels the same hardened HTTP as the nodes' downloads (docs/operations.md#fetch).
  const releaseTrust = new TufReleaseTrust(new LazyArtifactSource(), {
    metadataUrl: trust.metadataUrl,
    cacheDir: trust.cacheDir,
    rootFile: trust.rootFile,
    timeoutMs: artifact.timeoutMs,
    idleTimeoutMs: artifact.idleTimeoutMs,
    clock,
  });
  try {
    releaseTrust.checkRootAvailable();
  } catch (error) {
    if (!(error instanceof TrustError)) throw error;
    return fail('E_CONFIG', `trust.rootFile: ${error.message}`);
  }
  return ok(releaseTrust);
}
