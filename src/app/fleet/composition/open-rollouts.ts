import { KubernetesRolloutStore } from '../../../adapters/fleet/kubernetes/kubernetes-rollout-store.js';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import type { ClusterChoice } from '../cli/fleet-cli-context.js';
import { RolloutControl } from '../rollout/rollout-control.js';

/**
 * The composition of `agent-upgrade rollout …`: the rollout use cases over the chosen cluster.
 * One port and no process-wide state, so a function, where the controller's larger graph has a
 * container (createController).
 */
export function openRollouts(cluster: ClusterChoice): RolloutControl {
  return new RolloutControl({
    clock: new SystemClock(),
    openStore: () =>
      KubernetesRolloutStore.connect(cluster.kubeconfig, cluster.context === null ? {} : { context: cluster.context }),
  });
}
