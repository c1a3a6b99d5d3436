/**
 * deploy/chart installed by a real helm (scripts/build-helm.sh) into a real kube-apiserver: every
 * object the chart renders is created, the three CRDs from crds/ are Established, the grants are
 * in effect for the chart's ServiceAccount (asked of the API server's own authorizer), an upgrade
 * to one replica drops the budget, and `helm uninstall` removes everything but the CRDs, which
 * Helm never deletes. There is no kubelet or scheduler, so no pod ever runs: the install does not
 * wait for readiness, and the controller itself is proved elsewhere (rollout-e2e).
 *
 * The server starts empty (RealApiServer, not RealCluster, which applies the MachineOperation CRD
 * first): a CRD already there is one Helm skips, and the test would not show the chart's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART, Helm } from '../support/helm.js';
import { RealApiServer } from '../support/kube/real-apiserver.js';
import { waitFor } from '../support/wait-for.js';

const RELEASE = 'agent-upgrade-controller';
const NAMESPACE = 'agent-upgrade-system';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRDS = [
  'agentreleases.agent-upgrade.dev',
  'agentrollouts.agent-upgrade.dev',
  'machineoperations.unbounded-cloud.io',
];
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const BUDGET = `/apis/policy/v1/namespaces/${NAMESPACE}/poddisruptionbudgets/${RELEASE}`;
const DEPLOYMENT = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${RELEASE}`;

/** What the chart creates with its defaults, by API path. */
const OBJECTS = [
  DEPLOYMENT,
  BUDGET,
  `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${RELEASE}`,
  `/api/v1/namespaces/${NAMESPACE}/services/${RELEASE}-metrics`,
  `${RBAC}/clusterroles/${RELEASE}`,
  `${RBAC}/clusterrolebindings/${RELEASE}`,
  `${RBAC}/namespaces/${NAMESPACE}/roles/${RELEASE}-leader-election`,
  `${RBAC}/namespaces/${NAMESPACE}/rolebindings/${RELEASE}-leader-election`,
  `${RBAC}/namespaces/kube-node-lease/roles/${RELEASE}-node-leases`,
  `${RBAC}/namespaces/kube-node-lease/rolebindings/${RELEASE}-node-leases`,
];

/** Requests the chart's account must be allowed, and some it must not. */
const ACCESS: [string, { group: string; resource: string; verb: string; namespace?: string }, boolean][] = [
  ['create operations', { group: 'unbounded-cloud.io', resource: 'machineoperations', verb: 'create' }, true],
  ['delete operations', { group: 'unbounded-cloud.io', resource: 'machineoperations', verb: 'delete' }, false],
  ['patch releases', { group: 'agent-upgrade.dev', resource: 'agentreleases', verb: 'patch' }, true],
  ['update rollouts', { group: 'agent-upgrade.dev', resource: 'agentrollouts', verb: 'update' }, false],
  ['renew its Lease', { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: NAMESPACE }, true],
  [
    'watch kubelet Leases',
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'watch', namespace: 'kube-node-lease' },
    true,
  ],
  [
    'write kubelet Leases',
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'kube-node-lease' },
    false,
  ],
];

let server: RealApiServer;
let helm: Helm;

const status = async (path: string): Promise<number> => (await server.request(server.admin, 'GET', path)).status;
const statuses = async (paths: readonly string[]): Promise<Record<string, number>> =>
  Object.fromEntries(await Promise.all(paths.map(async (path) => [path, await status(path)] as const)));
const all = (paths: readonly string[], code: number): Record<string, number> =>
  Object.fromEntries(paths.map((path) => [path, code]));

/** Whether the API server's authorizer lets the chart's ServiceAccount make `request`. */
async function allowed(request: (typeof ACCESS)[number][1]): Promise<boolean> {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: `system:serviceaccount:${NAMESPACE}:${RELEASE}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`, 'system:authenticated'],
      resourceAttributes: request,
    },
  };
  const answer = await server.request(server.admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: review,
  });
  expect(answer.status, answer.text).toBe(201);
  return (answer.json as { status: { allowed?: boolean } }).status.allowed === true;
}

function runHelm(args: readonly string[]) {
  return helm.run([...args, '--kubeconfig', server.admin.kubeconfigPath], { timeoutMs: 120_000 });
}

beforeAll(async () => {
  [server, helm] = await Promise.all([RealApiServer.start(), Helm.create()]);
}, 180_000);

afterAll(async () => {
  await Promise.all([server?.stop(), helm?.cleanup()]);
}, 30_000);

describe('helm install of deploy/chart on a real API server', () => {
  it('creates every object of the chart and the three CRDs, Established', async () => {
    const install = await runHelm([
      'install',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '--create-namespace',
      // No kubelet runs here, so no pod would ever be ready: Helm must not wait for one.
      '--wait=hookOnly',
      '--timeout=90s',
    ]);
    expect(install.status, install.stderr).toBe(0);
    expect(await statuses(OBJECTS)).toEqual(all(OBJECTS, 200));
    for (const crd of CRDS) {
      const established = await server.kubectl(server.admin, [
        'wait',
        '--for=condition=Established',
        `crd/${crd}`,
        '--timeout=60s',
      ]);
      expect(established.status, established.stderr).toBe(0);
    }
    const deployment = (await server.request(server.admin, 'GET', DEPLOYMENT)).json as {
      spec: { replicas: number; template: { spec: { serviceAccountName: string } } };
    };
    expect(deployment.spec).toMatchObject({ replicas: 2, template: { spec: { serviceAccountName: RELEASE } } });
  }, 150_000);

  it("gives the chart's ServiceAccount exactly the controller's grants", async () => {
    const expected = Object.fromEntries(ACCESS.map(([what, , allow]) => [what, allow]));
    const actual = async () =>
      Object.fromEntries(await Promise.all(ACCESS.map(async ([what, request]) => [what, await allowed(request)])));
    // Bindings reach the authorizer through an informer: bounded until they have.
    expect(await waitFor(async () => JSON.stringify(await actual()) === JSON.stringify(expected), 30_000)).toBe(true);
    expect(await actual()).toEqual(expected);
  }, 60_000);

  it('an upgrade to one replica drops the budget and keeps the rest', async () => {
    const upgrade = await runHelm(['upgrade', RELEASE, CHART, '--namespace', NAMESPACE, '--set', 'replicas=1']);
    expect(upgrade.status, upgrade.stderr).toBe(0);
    expect(await status(BUDGET)).toBe(404);
    const rest = OBJECTS.filter((path) => path !== BUDGET);
    expect(await statuses(rest)).toEqual(all(rest, 200));
    const deployment = (await server.request(server.admin, 'GET', DEPLOYMENT)).json as { spec: { replicas: number } };
    expect(deployment.spec.replicas).toBe(1);
  }, 150_000);

  it("helm uninstall removes the chart's objects and keeps the CRDs", async () => {
    const uninstall = await runHelm(['uninstall', RELEASE, '--namespace', NAMESPACE, '--timeout=90s']);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    const gone = async () => Object.values(await statuses(OBJECTS)).every((code) => code === 404);
    expect(await waitFor(gone, 30_000)).toBe(true);
    expect(await statuses(OBJECTS)).toEqual(all(OBJECTS, 404));
    const crds = CRDS.map((name) => `${CRD_PATH}/${name}`);
    expect(await statuses(crds)).toEqual(all(crds, 200));
    const list = await runHelm(['list', '--namespace', NAMESPACE, '--output', 'json']);
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
  }, 150_000);
});
