import { Container, ContainerModule } from 'inversify';
import type { Clock } from '../../ports/clock.js';
import type { ControllerCluster, LeaseStore } from '../../ports/controller-cluster.js';
import type { ControllerMetrics } from '../../ports/controller-metrics.js';
import type { Logger } from '../../ports/logger.js';
import { RolloutController, type ControllerSettings } from '../controller/rollout-controller.js';
import { ControllerTokens, Tokens } from '../tokens.js';

/** The ports of a controller process: the real cluster (connectController), or a simulation's. */
export interface ControllerPorts {
  readonly cluster: ControllerCluster;
  readonly leases: LeaseStore;
  readonly metrics: ControllerMetrics;
  readonly clock: Clock;
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
  const { ports } = input;
  container.load(
    new ContainerModule(({ bind }) => {
      bind(ControllerTokens.ControllerSettings).toConstantValue(input.settings);
      bind(Tokens.Logger).toConstantValue(input.logger);
      bind(ControllerTokens.ControllerCluster).toConstantValue(ports.cluster);
      bind(ControllerTokens.LeaseStore).toConstantValue(ports.leases);
      bind(ControllerTokens.ControllerMetrics).toConstantValue(ports.metrics);
      bind(Tokens.Clock).toConstantValue(ports.clock);
    }),
    new ContainerModule(({ bind }) => {
      bind(ControllerTokens.RolloutController).toResolvedValue(
        (cluster, leases, clock, logger, metrics, settings) =>
          new RolloutController({ cluster, leases, clock, logger, metrics, settings }),
        [
          ControllerTokens.ControllerCluster,
          ControllerTokens.LeaseStore,
          Tokens.Clock,
          Tokens.Logger,
          ControllerTokens.ControllerMetrics,
          ControllerTokens.ControllerSettings,
        ],
      );
    }),
  );
  return container.get(ControllerTokens.RolloutController);
}
