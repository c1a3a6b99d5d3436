import { hostname } from 'node:os';
import { ContainerModule } from 'inversify';
import { KubeClient } from '../../adapters/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../adapters/kubernetes/kubernetes-operation-store.js';
import { NoOperationStore } from '../../adapters/none/no-operation-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { OperationStore } from '../../ports/operation-store.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { Tokens } from '../tokens.js';
import type { OperationStoreFactory } from '../upgrader-parts.js';

/**
 * `cluster.manager`: "kubernetes" connects with `cluster.kubeconfig` (or the default chain) and
 * watches for `cluster.machineName` (default: this host's name); "none" delivers no operations
 * (the daemon then runs its startup gate, converges the layout and idles). An
 * embedder's or a test's OperationStore replaces both.
 */
export function clusterPlatformModule(override: OperationStore | undefined): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(Tokens.OperationStoreFactory)
      .toResolvedValue(
        (config: UpgraderConfig, clock: Clock, logger: Logger): OperationStoreFactory =>
          async () => {
            if (override !== undefined) return override;
            if (config.cluster.manager === 'none') return new NoOperationStore();
            const client = await KubeClient.connect(config.cluster.kubeconfig);
            const machineName = config.cluster.machineName ?? hostname();
            return new KubernetesOperationStore({
              client,
              machineName,
              clock,
              logger: logger.child({ component: 'machine-operations' }),
            });
          },
        [Tokens.Config, Tokens.Clock, Tokens.Logger],
      )
      .inSingletonScope();
  });
}
