import { hostname } from 'node:os';
import { ContainerModule } from 'inversify';
import { KubeClient } from '../../adapters/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../adapters/kubernetes/kubernetes-operation-store.js';
import { KubernetesRolloutStore } from '../../adapters/kubernetes/rollout-store.js';
import { NoOperationStore } from '../../adapters/none/no-operation-store.js';
import { failure } from '../../domain/failure.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { RolloutStoreFactory } from '../../ports/rollout-store.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise } from '../failure-signal.js';
import type { OperationStoreFactory } from '../managed/session-options.js';
import { Tokens } from '../tokens.js';

/** Without a cluster there are no AgentRollouts: `agent-upgrade rollout …` is refused with E_CONFIG. */
export const noRolloutStore: RolloutStoreFactory = async () =>
  raise(failure('E_CONFIG', 'cluster.manager is "none": there is no cluster to read AgentRollouts from'));

/** `cluster.manager: "none"`: no operations are delivered (the daemon runs its gate, then idles). */
export const noClusterModule = new ContainerModule(({ bind }) => {
  bind(Tokens.OperationStoreFactory).toConstantValue(async () => new NoOperationStore());
  bind(Tokens.RolloutStoreFactory).toConstantValue(noRolloutStore);
});

/**
 * `cluster.manager: "kubernetes"`: connects with `cluster.kubeconfig` (or the default chain) on
 * first use and watches for `cluster.machineName` (default: this host's name, lower-cased as the
 * kubelet names its Node). Exec credential plugins run through the process runner, bounded like
 * every program the upgrader runs.
 */
export const kubernetesClusterModule = new ContainerModule(({ bind }) => {
  bind(Tokens.OperationStoreFactory).toResolvedValue(
    (config: UpgraderConfig, clock: Clock, logger: Logger, runner: ProcessRunner): OperationStoreFactory =>
      async () => {
        const client = await KubeClient.connect(config.cluster.kubeconfig, { runner, clock });
        const machineName = config.cluster.machineName ?? hostname().toLowerCase();
        return new KubernetesOperationStore({
          client,
          machineName,
          clock,
          logger: logger.child({ component: 'machine-operations' }),
        });
      },
    [Tokens.Config, Tokens.Clock, Tokens.Logger, Tokens.ProcessRunner],
  );
  // The operator CLI's AgentRollouts (docs/rollouts.md#the-operator-cli), over the same kubeconfig chain.
  bind(Tokens.RolloutStoreFactory).toResolvedValue(
    (config: UpgraderConfig, clock: Clock, runner: ProcessRunner): RolloutStoreFactory =>
      () =>
        KubernetesRolloutStore.connect(config.cluster.kubeconfig, { runner, clock }),
    [Tokens.Config, Tokens.Clock, Tokens.ProcessRunner],
  );
});
