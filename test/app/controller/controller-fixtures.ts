/** Rollouts, fleets and quiet ports for the controller's app-layer tests, built on the planner's fixtures. */
import { RecordingLogger } from '../../support/recording-logger.js';
import { exampleNodes } from '../../domain/rollout/example-cluster.js';
import { baseSpec, releases } from '../../domain/rollout/fixtures.js';
import type { RolloutObject } from '../../../src/domain/fleet/order/snapshot.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import type { OperationFacts } from '../../../src/ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../src/ports/fleet/controller-metrics.js';
import type { Logger } from '../../../src/ports/common/logger.js';
import { FakeApiServer } from './fake-api-server.js';

export const ROLLOUT = 'fleet';
export const RELEASE = 'agent-1.4.2';
export const ROLLBACK_RELEASE = 'agent-1.4.1';

/** Run, one wave over every target with room for all of them: the first plan creates one child per node. */
export function runSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return baseSpec({
    strategy: {
      waves: [{ name: 'all', percent: 100, maxInFlight: 10 }],
      operationTimeout: '10m',
      onFailure: 'Halt',
      quarantineOnHalt: true,
    },
    ...overrides,
  });
}

/** One wave over every target at once (`maxInFlight` and `maxUnavailable` 100%): a plan dispatches as much as a step holds. */
export function allAtOnceSpec(): Record<string, unknown> {
  const wave = { name: 'all', percent: 100, maxInFlight: '100%' };
  return runSpec({ strategy: { waves: [wave], maxUnavailable: '100%', operationTimeout: '10m' } });
}

export function rolloutObject(name = ROLLOUT, spec: unknown = runSpec()): RolloutObject {
  return { name, uid: `uid-${name}`, generation: 1, resourceVersion: '1', annotations: {}, spec, status: undefined };
}

/** A server with `size` nodes, both fixture releases and the rollout `fleet`. */
export function populatedServer(clock: Clock, size = 3, spec: unknown = runSpec()): FakeApiServer {
  const server = new FakeApiServer(clock);
  for (const node of exampleNodes(size).values()) server.put('nodes', node);
  for (const release of releases().values()) server.put('releases', release);
  server.put('rollouts', rolloutObject(ROLLOUT, spec));
  return server;
}

/** Any MachineOperation as the informer reads it; `labels` decide whose child it is. */
export function operationFacts(
  name: string,
  labels: Record<string, string> = {},
  machineRef = 'node-000',
): OperationFacts {
  return {
    name,
    uid: `uid-${name}`,
    machineRef,
    labels,
    ownerUid: null,
    phase: 'InProgress',
    reason: null,
    message: null,
    createdMs: 0,
    startedMs: 0,
    completedMs: null,
  };
}

/** Metrics that go nowhere: the tests read the cluster's state, not what was reported. */
export const quietMetrics: ControllerMetrics = {
  rolloutObserved: () => undefined,
  rolloutForgotten: () => undefined,
  halted: () => undefined,
  reconciled: () => undefined,
  apiRequest: () => undefined,
  leading: () => undefined,
  trustMetadataObserved: () => undefined,
};

export function quietLogger(): Logger {
  return new RecordingLogger();
}
