import { hostname } from 'node:os';
import { Command, Option } from 'clipanion';
import { translatePortError } from '../../common/translate-port-error.js';
import { controllerSettings, DEFAULT_NAMESPACE } from '../controller/controller-options.js';
import { CONTROLLER_TRUST_CACHE_DIR, loadControllerConfig } from '../controller/controller-config.js';
import { LOG_LEVELS } from '../../common/cli/output-command.js';
import { ClusterCommand } from './cluster-command.js';

export class ControllerCommand extends ClusterCommand {
  static override paths = [['controller']];

  static override usage = Command.Usage({
    description: 'Run the rollout controller: AgentRollouts become MachineOperations, in waves.',
    details: `
      Reconciles every AgentRollout (agent-upgrade.dev/v1alpha1) in the cluster: it picks the
      target Nodes, orders them into waves with diverse canaries, creates one AgentUpgrade
      MachineOperation per machine within the caps (\`maxInFlight\`, \`maxUnavailable\`), counts
      the results against the failure budgets, and halts, quarantines the release and rolls the
      fleet back as the rollout says. Everything it reads comes from its watches; every status
      write is guarded by the resourceVersion it planned from, so a crash or a restart anywhere
      converges to the same end state. See docs/rollouts.md.

      Run two replicas: they elect a leader on the Lease \`--lease-name\` in \`--namespace\`
      (POD_NAMESPACE, default ${DEFAULT_NAMESPACE}), and only the leader acts; the other takes
      over within the lease duration when the leader stops renewing. \`--identity\` (default
      POD_NAME, else the host name) names this replica in the Lease and in its Events.

      Signed releases: \`--config FILE\` is a JSON file with the nodes' \`trust\` section
      (docs/configuration.md#the-controllers-configuration). The controller then verifies every
      AgentRelease artifact against that TUF repository before any rollout dispatches it: the
      downloadURL must lie under \`trust.targetsUrl\` or a mirror, and the publisher must have
      signed that target with the release's version, the artifact's architecture and its SHA-256.
      A release that is not is \`Validated=False\` with reason \`Untrusted\` and is dispatched
      nowhere; an unreachable repository changes no verdict. Verified metadata is kept in
      \`trust.cacheDir\` (default ${CONTROLLER_TRUST_CACHE_DIR}); a role expiring within 7
      days is logged, recorded as an Event and shown in metrics.

      Prometheus metrics are served on \`--metrics-address\` at /metrics, with /healthz and
      /readyz (ready once this replica stands by, or leads with its caches filled).

      Every write to the API server (creates, status updates, Events, the Lease) waits for a
      token of a client-side bucket, as kube-controller-manager's do: \`--kube-api-qps\` a second
      (default 20), at most \`--kube-api-burst\` at once (default 30); the Lease has a bucket of
      its own, so creates never delay a renewal. \`--kube-api-qps 0\` turns the limit off. A 429
      with Retry-After pauses every write until then. A plan's creates go out in batches of 1, 2,
      4, … up to 64, and the first refused create ends the reconcile.

      The cluster is \`--kubeconfig\`, or KUBECONFIG, the in-cluster service account or
      ~/.kube/config. The identity needs the grants of deploy/agent-upgrade-controller-rbac.yaml.
      SIGTERM or SIGINT stops it and hands the Lease back.

      Exit codes: 0 stopped by a signal; 1 the cluster cannot be reached or refuses the
      credentials (\`E_CLUSTER\`, \`E_CLUSTER_AUTH\`); 2 a flag is wrong (\`E_USAGE\`), the
      \`--config\` file is missing or invalid, or the metrics port cannot be bound
      (\`E_CONFIG\`). The controller never changes this host.
    `,
    examples: [
      ['As its Deployment runs it', '$0 controller --log-level info'],
      [
        'Against a test cluster, metrics on a loopback port',
        '$0 controller --kubeconfig ./kubeconfig --metrics-address 127.0.0.1:9090',
      ],
      ['Writes paced at 50 a second, bursts of 100', '$0 controller --kube-api-qps 50 --kube-api-burst 100'],
      [
        "Signed releases: verify every AgentRelease against the nodes' TUF repository first",
        '$0 controller --config /etc/agent-upgrade-controller/config.json',
      ],
    ],
  });

  override logLevel = Option.String('--log-level', 'info', {
    description: `Log level for stderr (default info): ${LOG_LEVELS.join(', ')}`,
  });
  namespace = Option.String('-n,--namespace', {
    description: `The Lease's namespace (default POD_NAMESPACE, else ${DEFAULT_NAMESPACE})`,
  });
  eventsNamespace = Option.String('--events-namespace', 'default', {
    description: 'Where Events about rollouts and releases are recorded (default "default")',
  });
  identity = Option.String('--identity', {
    description: 'This replica in the Lease (default POD_NAME, else the host name)',
  });
  leaseName = Option.String('--lease-name', 'agent-upgrade-controller', { description: 'The leader-election Lease' });
  leaseDuration = Option.String('--lease-duration', '15s', { description: 'How long a lease holds unrenewed (15s)' });
  renewDeadline = Option.String('--renew-deadline', '10s', {
    description: 'The leader steps down after failing to renew this long (10s)',
  });
  retryPeriod = Option.String('--retry-period', '2s', { description: 'Between attempts to acquire or renew (2s)' });
  resync = Option.String('--resync', '5m', { description: 'Every rollout is reconciled at least this often (5m)' });
  metricsAddress = Option.String('--metrics-address', ':8080', {
    description: 'HOST:PORT, :PORT or off (default :8080)',
  });
  kubeApiQps = Option.String('--kube-api-qps', '20', {
    description: 'Writes to the API server a second, client-side; 0 for no limit (default 20)',
  });
  kubeApiBurst = Option.String('--kube-api-burst', '30', {
    description: 'Writes the client-side limit lets out at once (default 30)',
  });
  config = Option.String('--config', {
    description: 'JSON file with a `trust` section: verify releases against signed metadata first',
  });

  override async execute(): Promise<number> {
    const invalid = this.invalidLogLevel();
    if (invalid !== null) return this.failWith(invalid);
    const settings = controllerSettings(this, process.env, hostname().toLowerCase());
    if (!settings.ok) return this.failWith(settings.failure);
    const config = await loadControllerConfig(this.config);
    if (!config.ok) return this.failWith(config.failure);
    const logger = await this.context.logger(this.logLevel);
    // Loaded only here: the cluster client and the metrics registry cost every other command's start-up nothing.
    const { openHostController } = await import('../composition/host-controller.js');
    const opened = await openHostController(settings.value, logger.child({ component: 'controller' }), config.value);
    if (!opened.ok) return this.failWith(opened.failure);
    const { controller, metricsAddress } = opened.value;
    const trust = config.value.trust;
    logger.info(
      {
        identity: settings.value.leader.identity,
        metrics: metricsAddress,
        ...(trust !== null && { metadataUrl: trust.metadataUrl, targetsUrl: trust.targetsUrl }),
      },
      trust === null
        ? 'The rollout controller started.'
        : 'The rollout controller started; every release is verified against the signed metadata before dispatch.',
    );
    try {
      await this.interruptible((signal) => controller.run(signal ?? new AbortController().signal));
    } catch (error) {
      const failure = translatePortError(error);
      if (failure === null) throw error;
      return this.failWith(failure);
    } finally {
      await opened.value.close();
    }
    return this.succeed({ controller: { stopped: true } }, ['The rollout controller stopped.']);
  }
}
