import type { CliContext } from '../../common/cli/cli-context.js';
import type { RolloutControl } from '../rollout/rollout-control.js';

/** Which cluster a fleet command talks to, chosen as kubectl chooses it. */
export interface ClusterChoice {
  /** `--kubeconfig`; null: KUBECONFIG, the in-cluster service account, then ~/.kube/config. */
  readonly kubeconfig: string | null;
  /** `--context`; null: the kubeconfig's current context. */
  readonly context: string | null;
}

/** What the fleet's commands receive: the operator's rollout use cases over a chosen cluster. */
export interface FleetCliContext extends CliContext {
  /** The rollout use cases; the cluster is reached on their first request. */
  openRollouts(cluster: ClusterChoice): Promise<RolloutControl>;
}
