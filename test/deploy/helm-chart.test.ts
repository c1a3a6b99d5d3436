// deploy/chart, linted and rendered by a real helm (scripts/build-helm.sh): the objects it renders
// carry the values, its Deployment and grants are those of the shipped manifests (which stay the
// one source of truth: the chart is checked against them, never the other way round), the flags it
// renders are accepted by the controller's own parser, and its schema refuses what the controller
// would refuse. docs/rollouts.md#with-helm.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Cli } from 'clipanion';
import { load, loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControllerCommand } from '../../src/app/fleet/cli/controller-command.js';
import { checkControllerConfigText } from '../../src/app/fleet/controller/controller-config.js';
import { controllerSettings } from '../../src/app/fleet/controller/controller-options.js';
import { CHART, Helm, one, type KubeObject } from '../support/helm.js';

const DEPLOY = join(CHART, '..');
const CRDS = ['agentrelease-crd.yaml', 'agentrollout-crd.yaml', 'machineoperation-crd.yaml'];
const NAMESPACE = 'agent-upgrade-system';

interface Container {
  readonly command: string[];
  readonly args: string[];
  readonly image: string;
  readonly volumeMounts?: { name: string; mountPath: string }[];
  readonly [field: string]: unknown;
}
interface PodSpec {
  readonly containers: Container[];
  readonly securityContext: unknown;
  readonly serviceAccountName: string;
  readonly volumes?: { name: string; configMap?: { name: string }; emptyDir?: object }[];
}
type Rules = { apiGroups: string[]; resources: string[]; verbs: string[] }[];

const shipped = (file: string): KubeObject[] =>
  loadAll(readFileSync(join(DEPLOY, file), 'utf8')).filter((o): o is KubeObject => o !== null);
const podOf = (deployment: KubeObject): PodSpec =>
  (deployment['spec'] as { template: { spec: PodSpec } }).template.spec;
const controllerOf = (objects: readonly KubeObject[]): Container =>
  podOf(one(objects, 'Deployment')).containers[0] as Container;
const kinds = (objects: readonly KubeObject[]): string[] => objects.map((o) => o.kind).sort();

/** What the controller makes of the rendered command line: its own parser, then its own checks. */
function settingsOf(container: Container) {
  expect(container.command).toEqual(['agent-upgrade', 'controller']);
  // Parsing only: the context a run would need is never touched.
  const argv = [container.command[1] ?? '', ...container.args];
  const command = Cli.from([ControllerCommand]).process(argv, {} as never);
  if (!(command instanceof ControllerCommand)) throw new Error(`not the controller: ${container.args.join(' ')}`);
  return { command, settings: controllerSettings(command, { POD_NAME: 'pod-a', POD_NAMESPACE: NAMESPACE }, 'host') };
}

let helm: Helm;
let defaults: KubeObject[];
beforeAll(async () => {
  helm = await Helm.create();
  defaults = await helm.template();
}, 60_000);
afterAll(async () => {
  await helm?.cleanup();
});

describe('deploy/chart', () => {
  it('passes helm lint, --strict too, with the defaults and with every option on', async () => {
    const everything = ['--set', 'serviceMonitor.enabled=true,prometheusRule.enabled=true', ...trustSet()];
    for (const args of [
      ['lint', CHART],
      ['lint', '--strict', CHART],
      ['lint', '--strict', CHART, ...everything],
    ]) {
      const lint = await helm.run(args);
      expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    }
  });

  it('renders the controller, its identity and grants, the metrics Service and a budget by default', () => {
    expect(kinds(defaults)).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'PodDisruptionBudget',
      'Role',
      'Role',
      'RoleBinding',
      'RoleBinding',
      'Service',
      'ServiceAccount',
    ]);
    const deployment = one(defaults, 'Deployment', 'agent-upgrade-controller');
    expect(deployment.metadata.namespace).toBe(NAMESPACE);
    expect((deployment['spec'] as { replicas: number }).replicas).toBe(2);
    expect(podOf(deployment).serviceAccountName).toBe(one(defaults, 'ServiceAccount').metadata.name);
    expect(one(defaults, 'PodDisruptionBudget')['spec']).toMatchObject({ minAvailable: 1 });
    const service = one(defaults, 'Service')['spec'] as { selector: object; ports: object[] };
    expect(service.ports).toEqual([{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]);
    expect(service.selector).toEqual(
      (deployment['spec'] as { selector: { matchLabels: object } }).selector.matchLabels,
    );
  });

  it('runs the controller as the shipped Deployment does: image, probes, ports, env, security', () => {
    const manifest = one(shipped('agent-upgrade-controller.yaml'), 'Deployment');
    const { args: _args, command: _command, image: _image, imagePullPolicy: _policy, ...rest } = controllerOf(defaults);
    const { args: shippedArgs, image: shippedImage, ...shippedRest } = podOf(manifest).containers[0] as Container;
    expect(rest).toEqual(shippedRest);
    expect(podOf(one(defaults, 'Deployment')).securityContext).toEqual(podOf(manifest).securityContext);
    expect(controllerOf(defaults).image).toBe(shippedImage);
    // The shipped args start with the executable and the command, which the chart puts in `command`.
    expect(shippedArgs.slice(0, 2)).toEqual(controllerOf(defaults).command);
  });

  it('renders command-line flags the controller accepts, with the defaults and with other values', async () => {
    const byDefault = settingsOf(controllerOf(defaults));
    expect(byDefault.settings).toMatchObject({
      ok: true,
      value: {
        namespace: NAMESPACE,
        leaseName: 'agent-upgrade-controller',
        eventsNamespace: 'default',
        metrics: { port: 8080 },
        writePacing: { qps: 20, burst: 30 },
        leader: { identity: 'pod-a', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
      },
    });
    expect(byDefault.command.logLevel).toBe('info');
    expect(byDefault.command.config).toBeUndefined();
    const set = [
      'kubeApi.qps=2.5,kubeApi.burst=100,leaderElection.leaseName=elsewhere,leaderElection.namespace=leases',
      'leaderElection.leaseDuration=1m,leaderElection.renewDeadline=40s,leaderElection.retryPeriod=5s',
      'eventsNamespace=fleet-events,metrics.port=9090,logLevel=debug,resync=10m',
    ];
    const other = settingsOf(controllerOf(await helm.template(set)));
    expect(other.settings).toMatchObject({
      ok: true,
      value: {
        namespace: 'leases',
        leaseName: 'elsewhere',
        eventsNamespace: 'fleet-events',
        metrics: { port: 9090 },
        writePacing: { qps: 2.5, burst: 100 },
        leader: { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 5_000 },
        loop: { resyncMs: 600_000 },
      },
    });
    expect(other.command.logLevel).toBe('debug');
    const off = settingsOf(controllerOf(await helm.template(['kubeApi.qps=0'])));
    expect(off.settings).toMatchObject({ ok: true, value: { writePacing: null } });
  });

  it("grants exactly the shipped RBAC's rules, to the chart's ServiceAccount", async () => {
    const manifest = shipped('agent-upgrade-controller-rbac.yaml');
    const rulesOf = (objects: readonly KubeObject[], kind: string, namespace?: string): Rules[] =>
      objects
        .filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace))
        .map((o) => o['rules'] as Rules);
    expect(rulesOf(defaults, 'ClusterRole')).toEqual(rulesOf(manifest, 'ClusterRole'));
    for (const namespace of [NAMESPACE, 'kube-node-lease'])
      expect(rulesOf(defaults, 'Role', namespace)).toEqual(rulesOf(manifest, 'Role', namespace));
    const account = { kind: 'ServiceAccount', name: 'agent-upgrade-controller', namespace: NAMESPACE };
    for (const binding of defaults.filter((o) => o.kind.endsWith('Binding')))
      expect(binding['subjects'], binding.metadata.name).toEqual([account]);
    // The Lease's Role follows the Lease when it lives elsewhere.
    const moved = await helm.template(['leaderElection.namespace=leases']);
    expect(rulesOf(moved, 'Role', 'leases')).toEqual(rulesOf(manifest, 'Role', NAMESPACE));
  });

  it('with a ServiceMonitor, the alerts, signed releases and one replica: each object, and no budget', async () => {
    const objects = await helm.template(
      ['serviceMonitor.enabled=true,prometheusRule.enabled=true,prometheusRule.labels.release=kps,replicas=1'],
      trustSet(),
    );
    expect(kinds(objects)).toEqual(
      [
        ...kinds(defaults).filter((k) => k !== 'PodDisruptionBudget'),
        'ConfigMap',
        'PrometheusRule',
        'ServiceMonitor',
      ].sort(),
    );
    const monitor = one(objects, 'ServiceMonitor')['spec'] as { selector: object; endpoints: { port: string }[] };
    expect(monitor.endpoints.map((endpoint) => endpoint.port)).toEqual(['metrics']);
    expect(monitor.selector).toEqual({
      matchLabels: (one(objects, 'Service')['spec'] as { selector: object }).selector,
    });
    const rule = one(objects, 'PrometheusRule');
    const shippedRule = one(shipped('monitoring/prometheus-rules.yaml'), 'PrometheusRule');
    expect(rule['spec']).toEqual(shippedRule['spec']);
    expect(rule.metadata.labels).toMatchObject({ release: 'kps' });
    expect((one(objects, 'Deployment')['spec'] as { replicas: number }).replicas).toBe(1);
  });

  it('signed releases: a --config the controller accepts, mounted with its root, and a writable cache', async () => {
    const objects = await helm.template([], trustSet());
    const data = one(objects, 'ConfigMap')['data'] as Record<string, string>;
    const check = checkControllerConfigText(data['config.json'] ?? '');
    expect(check).toMatchObject({
      ok: true,
      config: {
        trust: {
          rootFile: '/etc/agent-upgrade-controller/root.json',
          metadataUrl: 'https://releases.example.com/metadata/',
          targetsUrl: 'https://releases.example.com/targets/',
          mirrors: ['https://mirror.example.com/targets/'],
        },
        artifact: { timeoutMs: 5_000 },
      },
    });
    expect(JSON.parse(data['root.json'] ?? '')).toEqual(ROOT);
    const container = controllerOf(objects);
    expect(settingsOf(container).command.config).toBe('/etc/agent-upgrade-controller/config.json');
    const mounts = Object.fromEntries((container.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
    const volumes = Object.fromEntries((podOf(one(objects, 'Deployment')).volumes ?? []).map((v) => [v.name, v]));
    expect(volumes[mounts['/etc/agent-upgrade-controller'] ?? '']?.configMap?.name).toBe(
      one(objects, 'ConfigMap').metadata.name,
    );
    // trust.cacheDir's default lies under this emptyDir (the root filesystem is read-only).
    expect(volumes[mounts['/var/lib/agent-upgrade-controller'] ?? '']?.emptyDir).toEqual({});
  });

  it('keeps a budget only while it is enabled and there is more than one replica', async () => {
    expect(kinds(await helm.template(['podDisruptionBudget.enabled=false']))).not.toContain('PodDisruptionBudget');
    expect(kinds(await helm.template(['replicas=1']))).not.toContain('PodDisruptionBudget');
    expect(one(await helm.template(['replicas=3']), 'PodDisruptionBudget')['spec']).toMatchObject({ minAvailable: 1 });
  });

  it.each([
    ['no replica', ['--set', 'replicas=0']],
    ['a burst of none', ['--set', 'kubeApi.burst=0']],
    ['a fractional burst', ['--set', 'kubeApi.burst=2.5']],
    ['a rate that is not a number', ['--set', 'kubeApi.qps=fast']],
    ['a duration without a unit', ['--set-string', 'leaderElection.leaseDuration=15']],
    ['an unknown key (a typo)', ['--set', 'replica=3']],
    ['an unknown pull policy', ['--set', 'image.pullPolicy=Sometimes']],
    ['signed releases without their repository', ['--set', 'trust.enabled=true']],
    ['a metadata URL without its trailing slash', [...trustSet(), '--set', 'trust.metadataUrl=https://r.example/m']],
  ])('values.schema.json refuses %s', async (_what, values) => {
    const rendered = await helm.run(['template', 'agent-upgrade-controller', CHART, ...values]);
    expect(rendered.status).not.toBe(0);
    expect(rendered.stdout).toBe('');
  });

  it("ships the CRDs of deploy/ in crds/, byte for byte, and the alerts' file likewise", () => {
    expect(readdirSync(join(CHART, 'crds')).sort()).toEqual(CRDS);
    for (const file of CRDS)
      expect(readFileSync(join(CHART, 'crds', file), 'utf8'), file).toBe(readFileSync(join(DEPLOY, file), 'utf8'));
    expect(readFileSync(join(CHART, 'files/prometheus-rules.yaml'), 'utf8')).toBe(
      readFileSync(join(DEPLOY, 'monitoring/prometheus-rules.yaml'), 'utf8'),
    );
  });

  it("is versioned with the package: appVersion is package.json's version", () => {
    const chart = load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string; version: string };
    const pkg = JSON.parse(readFileSync(join(DEPLOY, '../package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'agent-upgrade-controller', appVersion: pkg.version });
  });
});

const ROOT = { signed: { _type: 'root', version: 1 }, signatures: [] };

/** Signed releases on, as `--set` flags (the root as a JSON string, which --set-json keeps whole). */
function trustSet(): string[] {
  return [
    '--set',
    'trust.enabled=true,trust.metadataUrl=https://releases.example.com/metadata/',
    '--set',
    'trust.targetsUrl=https://releases.example.com/targets/,trust.mirrors[0]=https://mirror.example.com/targets/',
    '--set',
    'trust.artifact.timeoutMs=5000',
    '--set-json',
    `trust.rootJson=${JSON.stringify(JSON.stringify(ROOT))}`,
  ];
}
