// The rollout controller's RBAC in deploy/, and kubectl mapping every manifest in deploy/ and the
// rollout examples through discovery.

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOY, type Doc, EXAMPLES, rbac } from './rollout-manifests.js';

const KUBECTL = '/usr/bin/kubectl';

describe('the controller RBAC', () => {
  const find = (kind: string, name?: string): Doc => {
    const found = rbac.filter((doc) => doc['kind'] === kind && (name === undefined || doc['metadata'].name === name));
    expect(found, kind).toHaveLength(1);
    return found[0] as Doc;
  };
  const LEADER = 'agent-upgrade-controller-leader-election';
  const NODE_LEASES = 'agent-upgrade-controller-node-leases';

  it('is a ServiceAccount in its own namespace, bound to one ClusterRole, a leader-election Role and a Role to read the kubelets’ Leases', () => {
    expect(rbac.map((doc) => `${doc['kind']} ${doc['metadata'].namespace ?? '-'}/${doc['metadata'].name}`)).toEqual([
      'Namespace -/agent-upgrade-system',
      'ServiceAccount agent-upgrade-system/agent-upgrade-controller',
      'ClusterRole -/agent-upgrade-controller',
      'ClusterRoleBinding -/agent-upgrade-controller',
      'Role agent-upgrade-system/agent-upgrade-controller-leader-election',
      'RoleBinding agent-upgrade-system/agent-upgrade-controller-leader-election',
      'Role kube-node-lease/agent-upgrade-controller-node-leases',
      'RoleBinding kube-node-lease/agent-upgrade-controller-node-leases',
    ]);
    const subject = { kind: 'ServiceAccount', name: 'agent-upgrade-controller', namespace: 'agent-upgrade-system' };
    expect(find('ClusterRoleBinding')['subjects']).toEqual([subject]);
    expect(find('ClusterRoleBinding')['roleRef']).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'agent-upgrade-controller',
    });
    for (const name of [LEADER, NODE_LEASES]) {
      expect(find('RoleBinding', name)['subjects']).toEqual([subject]);
      expect(find('RoleBinding', name)['roleRef']).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name,
      });
    }
  });

  it('grants exactly the verbs the controller uses', () => {
    expect(find('ClusterRole')['rules']).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      { apiGroups: ['unbounded-cloud.io'], resources: ['machineoperations'], verbs: ['create', 'list', 'watch'] },
      { apiGroups: ['agent-upgrade.dev'], resources: ['agentrollouts'], verbs: ['list', 'watch'] },
      { apiGroups: ['agent-upgrade.dev'], resources: ['agentrollouts/status'], verbs: ['update'] },
      { apiGroups: ['agent-upgrade.dev'], resources: ['agentreleases'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: ['agent-upgrade.dev'], resources: ['agentreleases/status'], verbs: ['update'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ]);
    expect(find('Role', LEADER)['rules']).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    expect(find('Role', NODE_LEASES)['rules']).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list', 'watch'] },
    ]);
  });
});

describe('kubectl', () => {
  let scratch: string;
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'deploy-rollout-'));
    server = createServer((req, res) => {
      const document = discovery(req.url?.split('?')[0] ?? '');
      res.writeHead(document === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(document ?? { kind: 'Status', status: 'Failure', code: 404 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(scratch, { recursive: true, force: true });
  });

  it('maps every manifest in deploy/ and the rollout examples through discovery (create --dry-run=client)', async () => {
    const run = await kubectl(origin, scratch, [
      'create',
      '--dry-run=client',
      '--validate=false',
      '-o',
      'name',
      '-f',
      DEPLOY,
      '-f',
      join(EXAMPLES, 'agent-release.yaml'),
      '-f',
      join(EXAMPLES, 'agent-rollout.yaml'),
    ]);
    expect(run.code, run.stderr).toBe(0);
    // Other manifests in deploy/ (the daemon's) are listed too; these are the controller's.
    expect(run.stdout.trim().split('\n')).toEqual(
      expect.arrayContaining([
        'agentrelease.agent-upgrade.dev/aks-flex-node-v1.4.1',
        'agentrelease.agent-upgrade.dev/aks-flex-node-v1.4.2',
        'agentrollout.agent-upgrade.dev/fleet-v1-4-2',
        'clusterrole.rbac.authorization.k8s.io/agent-upgrade-controller',
        'clusterrole.rbac.authorization.k8s.io/agent-upgrade-daemon',
        'clusterrolebinding.rbac.authorization.k8s.io/agent-upgrade-controller',
        'clusterrolebinding.rbac.authorization.k8s.io/agent-upgrade-daemon',
        'customresourcedefinition.apiextensions.k8s.io/agentreleases.agent-upgrade.dev',
        'customresourcedefinition.apiextensions.k8s.io/agentrollouts.agent-upgrade.dev',
        'customresourcedefinition.apiextensions.k8s.io/machineoperations.unbounded-cloud.io',
        'deployment.apps/agent-upgrade-controller',
        'namespace/agent-upgrade-system',
        'role.rbac.authorization.k8s.io/agent-upgrade-controller-leader-election',
        'rolebinding.rbac.authorization.k8s.io/agent-upgrade-controller-leader-election',
        'role.rbac.authorization.k8s.io/agent-upgrade-controller-node-leases',
        'rolebinding.rbac.authorization.k8s.io/agent-upgrade-controller-node-leases',
        'serviceaccount/agent-upgrade-controller',
      ]),
    );
  });
});

/** Legacy discovery for the kinds in deploy/, enough for kubectl to map them to resources. */
function discovery(path: string): object | undefined {
  const all = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
  const resource = (name: string, kind: string, namespaced: boolean, shortNames: string[] = []) => ({
    name,
    singularName: kind.toLowerCase(),
    namespaced,
    kind,
    verbs: all,
    shortNames,
  });
  const groups: Record<string, object[]> = {
    v1: [
      resource('namespaces', 'Namespace', false, ['ns']),
      resource('serviceaccounts', 'ServiceAccount', true, ['sa']),
    ],
    'apiextensions.k8s.io/v1': [resource('customresourcedefinitions', 'CustomResourceDefinition', false, ['crd'])],
    'rbac.authorization.k8s.io/v1': [
      resource('clusterroles', 'ClusterRole', false),
      resource('clusterrolebindings', 'ClusterRoleBinding', false),
      resource('roles', 'Role', true),
      resource('rolebindings', 'RoleBinding', true),
    ],
    'admissionregistration.k8s.io/v1': [
      resource('validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false),
      resource('validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false),
    ],
    'apps/v1': [resource('deployments', 'Deployment', true, ['deploy'])],
    'unbounded-cloud.io/v1alpha3': [resource('machineoperations', 'MachineOperation', false, ['mop'])],
    'agent-upgrade.dev/v1alpha1': [
      resource('agentreleases', 'AgentRelease', false, ['arel']),
      resource('agentrollouts', 'AgentRollout', false, ['arl']),
    ],
  };
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (path === '/apis') {
    const named = Object.keys(groups).filter((gv) => gv.includes('/'));
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: named.map((gv) => {
        const version = { groupVersion: gv, version: gv.split('/')[1] };
        return { name: gv.split('/')[0], versions: [version], preferredVersion: version };
      }),
    };
  }
  const gv = path.replace(/^\/apis?\//, '');
  const resources = groups[gv];
  return resources === undefined
    ? undefined
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
}

function kubectl(
  origin: string,
  scratch: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [`--server=${origin}`, `--cache-dir=${join(scratch, 'cache')}`, '--request-timeout=10s', ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: scratch, KUBECONFIG: join(scratch, 'kubeconfig') },
        timeout: 20_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    );
  });
}
