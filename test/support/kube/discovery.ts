// Legacy (non-aggregated) discovery documents. kubectl asks for aggregated discovery first, but
// falls back to these when the answer's content-type is plain application/json; that is all it
// needs to map the kinds in deploy/ to resources.

import type { JsonObject } from './json.js';
import { GROUP, KIND, PLURAL, VERSION } from './types.js';

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];

interface ResourceSpec {
  readonly name: string;
  readonly singularName: string;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly namespaced?: boolean;
}

interface GroupVersionSpec {
  readonly group: string; // "" is the core group, served under /api
  readonly version: string;
  readonly resources: readonly ResourceSpec[];
}

/**
 * Everything the fake claims to serve (so kubectl can map every manifest in deploy/). Nodes, the
 * three custom resources, Leases and Events have real handlers; the rest is discovery only.
 */
const SERVED: readonly GroupVersionSpec[] = [
  {
    group: '',
    version: 'v1',
    resources: [
      { name: 'nodes', singularName: 'node', kind: 'Node', verbs: ALL, shortNames: ['no'] },
      { name: 'nodes/status', singularName: '', kind: 'Node', verbs: STATUS_VERBS },
      { name: 'namespaces', singularName: 'namespace', kind: 'Namespace', verbs: ALL, shortNames: ['ns'] },
    ],
  },
  {
    group: GROUP,
    version: VERSION,
    resources: [
      { name: PLURAL, singularName: 'machineoperation', kind: KIND, verbs: ALL, shortNames: ['mop'] },
      { name: `${PLURAL}/status`, singularName: '', kind: KIND, verbs: STATUS_VERBS },
    ],
  },
  {
    group: 'agent-upgrade.dev',
    version: 'v1alpha1',
    resources: [
      { name: 'agentreleases', singularName: 'agentrelease', kind: 'AgentRelease', verbs: ALL, shortNames: ['arel'] },
      { name: 'agentreleases/status', singularName: '', kind: 'AgentRelease', verbs: STATUS_VERBS },
      { name: 'agentrollouts', singularName: 'agentrollout', kind: 'AgentRollout', verbs: ALL, shortNames: ['arl'] },
      { name: 'agentrollouts/status', singularName: '', kind: 'AgentRollout', verbs: STATUS_VERBS },
    ],
  },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resources: [
      {
        name: 'customresourcedefinitions',
        singularName: 'customresourcedefinition',
        kind: 'CustomResourceDefinition',
        verbs: ALL,
        shortNames: ['crd', 'crds'],
        categories: ['api-extensions'],
      },
      {
        name: 'customresourcedefinitions/status',
        singularName: '',
        kind: 'CustomResourceDefinition',
        verbs: STATUS_VERBS,
      },
    ],
  },
  {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resources: [
      {
        name: 'validatingadmissionpolicies',
        singularName: 'validatingadmissionpolicy',
        kind: 'ValidatingAdmissionPolicy',
        verbs: ALL,
        categories: ['api-extensions'],
      },
      {
        name: 'validatingadmissionpolicybindings',
        singularName: 'validatingadmissionpolicybinding',
        kind: 'ValidatingAdmissionPolicyBinding',
        verbs: ALL,
        categories: ['api-extensions'],
      },
    ],
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resources: [
      { name: 'clusterrolebindings', singularName: 'clusterrolebinding', kind: 'ClusterRoleBinding', verbs: ALL },
      { name: 'clusterroles', singularName: 'clusterrole', kind: 'ClusterRole', verbs: ALL },
    ],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resources: [{ name: 'leases', singularName: 'lease', kind: 'Lease', verbs: ALL, namespaced: true }],
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    resources: [
      { name: 'events', singularName: 'event', kind: 'Event', verbs: ALL, shortNames: ['ev'], namespaced: true },
    ],
  },
];

const groupVersion = (gv: GroupVersionSpec): string => (gv.group === '' ? gv.version : `${gv.group}/${gv.version}`);

function resourceList(gv: GroupVersionSpec): JsonObject {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(gv),
    resources: gv.resources.map((r) => {
      const entry: JsonObject = {
        name: r.name,
        singularName: r.singularName,
        namespaced: r.namespaced === true,
        kind: r.kind,
        verbs: [...r.verbs],
      };
      if (r.shortNames !== undefined) entry['shortNames'] = [...r.shortNames];
      if (r.categories !== undefined) entry['categories'] = [...r.categories];
      return entry;
    }),
  };
}

function apiGroup(gv: GroupVersionSpec): JsonObject {
  const version = { groupVersion: groupVersion(gv), version: gv.version };
  return { kind: 'APIGroup', apiVersion: 'v1', name: gv.group, versions: [version], preferredVersion: version };
}

/** The discovery document for `path`, or undefined if `path` is not a discovery path. */
export function discoveryDocument(
  path: string,
  serverAddress: string,
  selectableFields: boolean,
): JsonObject | undefined {
  if (path === '/version') {
    // Field selectors on CRD selectableFields are beta from 1.31 and GA in 1.32; claim a version
    // consistent with whether the fake honours them.
    const minor = selectableFields ? '32' : '30';
    return {
      major: '1',
      minor,
      gitVersion: `v1.${minor}.0-fake`,
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2025-01-01T00:00:00Z',
      goVersion: 'go1.23.0',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }
  if (path === '/api') {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }
  if (path === '/apis') {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: SERVED.filter((gv) => gv.group !== '').map(apiGroup) };
  }
  for (const gv of SERVED) {
    const base = gv.group === '' ? '/api' : '/apis';
    if (path === `${base}/${groupVersion(gv)}`) return resourceList(gv);
    if (gv.group !== '' && path === `/apis/${gv.group}`) return apiGroup(gv);
  }
  return undefined;
}
