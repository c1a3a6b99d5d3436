import type { ServiceIdentifier } from 'inversify';
import type { ControllerCluster, LeaseStore } from '../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../ports/fleet/controller-metrics.js';
import type { MetricsQuery } from '../../ports/fleet/metrics-query.js';
import { CommonTokens } from '../common/common-tokens.js';
import type { ControllerTrust } from './controller/release-verifier.js';
import type { ControllerSettings, RolloutController } from './controller/rollout-controller.js';

/** The rollout controller's process (createController): its ports and use case, with the shared Logger and Clock. */
export const FleetTokens = Object.freeze({
  ...CommonTokens,
  ControllerSettings: Symbol('ControllerSettings') as ServiceIdentifier<ControllerSettings>,
  ControllerCluster: Symbol('ControllerCluster') as ServiceIdentifier<ControllerCluster>,
  LeaseStore: Symbol('LeaseStore') as ServiceIdentifier<LeaseStore>,
  ControllerMetrics: Symbol('ControllerMetrics') as ServiceIdentifier<ControllerMetrics>,
  /** Signed releases, or null: the `trust` settings and the repository's client. */
  ControllerTrust: Symbol('ControllerTrust') as ServiceIdentifier<ControllerTrust | null>,
  RolloutController: Symbol('RolloutController') as ServiceIdentifier<RolloutController>,
  /** Prometheus's query API, for the waves' analyses. */
  MetricsQuery: Symbol('MetricsQuery') as ServiceIdentifier<MetricsQuery>,
});
