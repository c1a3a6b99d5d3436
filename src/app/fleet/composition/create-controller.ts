import { Container, ContainerModule } from 'inversify';
import type { Clock } from '../../../ports/common/clock.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { ControllerCluster, LeaseStore } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import { RolloutController, type ControllerSettings } from '../controller/rollout-controller.js';
import { FleetTokens } from '../fleet-tokens.js';
import type { MetricsQuery } from '../../../ports/fleet/metrics-query.js';
import { NO_METRICS_QUERY } from '../controller/analysis-measurer.js';

/** The ports of a controller process: the real cluster (connectController), or a simulation's. */
export interface ControllerPorts {
  readonly cluster: ControllerCluster;
  readonly leases: LeaseStore;
  readonly metrics: ControllerMetrics;
  readonly clock: Clock;
  /** The client of the trusted repository, when the settings name one (`trust`). */
  readonly releaseTrust?: ReleaseTrust | null;
  /** Prometheus, for the waves' analyses; absent: every measurement is an error the analysis counts. */
  readonly metricsQuery?: MetricsQuery;
}

export interface ControllerInput {
  readonly settings: ControllerSettings;
  readonly logger: Logger;
  readonly ports: ControllerPorts;
}

/**
 * The composition root of `agent-upgrade controller`: the caller's settings and logger, the
 * platform's ports, then the controller. A simulation builds its controller processes here too,
 * with the same adapters over a fake API server and a virtual clock.
 */
export function createController(input: ControllerInput): RolloutController {
  const container = new Container({ defaultScope: 'Singleton' });
  const { ports, settings } = input;
  const trustSettings = settings.trust ?? null;
  const releaseTrust = ports.releaseTrust ?? null;
  if ((trustSettings === null) !== (releaseTrust === null))
    throw new TypeError('createController: trust settings and a ReleaseTrust port come together, or neither does');
  container.load(
    new ContainerModule(({ bind }) => {
      bind(FleetTokens.ControllerSettings).toConstantValue(input.settings);
      bind(FleetTokens.Logger).toConstantValue(input.logger);
      bind(FleetTokens.ControllerCluster).toConstantValue(ports.cluster);
      bind(FleetTokens.LeaseStore).toConstantValue(ports.leases);
      bind(FleetTokens.ControllerMetrics).toConstantValue(ports.metrics);
      bind(FleetTokens.Clock).toConstantValue(ports.clock);
      bind(FleetTokens.MetricsQuery).toConstantValue(ports.metricsQuery ?? NO_METRICS_QUERY);
      const trust = trustSettings === null || releaseTrust === null ? null : { settings: trustSettings, releaseTrust };
      bind(FleetTokens.ControllerTrust).toConstantValue(trust);
    }),
    new ContainerModule(({ bind }) => {
      const dependencies = {
        cluster: FleetTokens.ControllerCluster,
        leases: FleetTokens.LeaseStore,
        clock: FleetTokens.Clock,
        logger: FleetTokens.Logger,
        metrics: FleetTokens.ControllerMetrics,
        settings: FleetTokens.ControllerSettings,
        trust: FleetTokens.ControllerTrust,
        metricsQuery: FleetTokens.MetricsQuery,
      };
      bindBuilt(bind, FleetTokens.RolloutController, dependencies, (ports) => new RolloutController(ports));
    }),
  );
  return container.get(FleetTokens.RolloutController);
}
