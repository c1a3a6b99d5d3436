import { Option } from 'clipanion';
import { OutputCommand } from '../../common/cli/output-command.js';
import type { ClusterChoice, FleetCliContext } from './fleet-cli-context.js';

/**
 * The fleet's commands: they reach the cluster only, with kubectl's options, and never read this
 * host's configuration or layout (no `--root`; the controller's own `--config` holds only its
 * signed-release settings).
 */
export abstract class ClusterCommand extends OutputCommand<FleetCliContext> {
  kubeconfig = Option.String('--kubeconfig', {
    description: 'Kubeconfig file (default: KUBECONFIG, the in-cluster service account, then ~/.kube/config)',
  });
  kubeContext = Option.String('--context', { description: 'The kubeconfig context to use (default: its current one)' });

  protected cluster(): ClusterChoice {
    return { kubeconfig: this.kubeconfig ?? null, context: this.kubeContext ?? null };
  }
}
