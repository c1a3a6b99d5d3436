import { hostname } from 'node:os';
import { ContainerModule } from 'inversify';
import { KubeClient } from '../../../adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../../adapters/node/kubernetes/kubernetes-operation-store.js';
import { NoOperationStore } from '../../../adapters/node/none/no-operation-store.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import type { OperationStoreFactory } from '../managed/session-options.js';
import { Tokens } from '../tokens.js';

/** `cluster.manager: "none"`: no operations are delivered (the daemon runs its gate, then idles). */
export const noClusterModule = new ContainerModule(({ bind }) => {
  bind(Tokens.OperationStoreFactory).toConstantValue(async () => new NoOperationStore());
});

/**
 * `cluster.manager: "kubernetes"`: connects with `cluster.kubeconfig` (or the default chain) on
 * first use and watches for `cluster.machineName` (default: this host's name, lower-cased as the
 * kubelet names its Node). Exec credential plugins run through the process runner, bounded like
 * every program the upgrader runs.
 */
export const kubernetesClusterModule = new ContainerModule(({ bind }) => {
  const dependencies = {
    config: Tokens.Config,
    clock: Tokens.Clock,
    logger: Tokens.Logger,
    runner: Tokens.ProcessRunner,
  };
  bindBuilt(
    bind,
    Tokens.OperationStoreFactory,
    dependencies,
    ({ config, clock, logger, runner }): OperationStoreFactory =>
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
  );
});
