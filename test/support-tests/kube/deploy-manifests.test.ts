// The daemon's manifests in deploy/ pin the contract the daemon and the fake API server rely on
// (docs/operations.md#install-the-manifests): the MachineOperation CRD (and its variant for
// servers before 1.30), the daemon's RBAC and the admission policy that keeps nodes to their own
// operations. Other components' manifests in deploy/ have tests of their own.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';

const DEPLOY = join(import.meta.dirname, '../../../deploy');

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}

function isManifest(doc: unknown): doc is Manifest {
  if (typeof doc !== 'object' || doc === null) return false;
  const { apiVersion, kind, metadata } = doc as Record<string, unknown>;
  return (
    typeof apiVersion === 'string' && typeof kind === 'string' && typeof metadata === 'object' && metadata !== null
  );
}

/** The daemon's files; the rollout controller's manifests are checked by deploy-rollout-manifests.test.ts. */
const DAEMON_FILES = [
  'agent-upgrade-admission-policy.yaml',
  'agent-upgrade-rbac.yaml',
  'machineoperation-crd-pre-1.30.yaml',
  'machineoperation-crd.yaml',
];

function load(file: string): Manifest[] {
  return loadAll(readFileSync(join(DEPLOY, file), 'utf8'))
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc) => {
      if (!isManifest(doc)) throw new Error(`not a Kubernetes manifest: ${JSON.stringify(doc)}`);
      return doc;
    });
}

/** Everything but the pre-1.30 CRD, which is compared with the main one below. */
const manifests: Manifest[] = DAEMON_FILES.filter((file) => file !== 'machineoperation-crd-pre-1.30.yaml').flatMap(
  load,
);

function one(kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found, kind).toHaveLength(1);
  const [manifest] = found;
  if (manifest === undefined) throw new Error(`no ${kind}`);
  return manifest;
}

/** Walks a parsed YAML tree by keys, failing loudly on a missing step. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !(key in current))
      throw new Error(`missing ${path.join('.')} at ${String(key)}`);
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

const keys = (value: unknown): string[] => Object.keys(value as object).sort();

describe('deploy/ manifests of the daemon', () => {
  it('are all there, and hold exactly the CRD, the RBAC and the admission policy', () => {
    expect(readdirSync(DEPLOY)).toEqual(expect.arrayContaining(DAEMON_FILES));
    expect(manifests.map((m) => `${m.apiVersion} ${m.kind} ${m.metadata.name}`).sort()).toEqual([
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy agent-upgrade-node-status',
      'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding agent-upgrade-node-status',
      'apiextensions.k8s.io/v1 CustomResourceDefinition machineoperations.unbounded-cloud.io',
      'rbac.authorization.k8s.io/v1 ClusterRole agent-upgrade-daemon',
      'rbac.authorization.k8s.io/v1 ClusterRoleBinding agent-upgrade-daemon',
    ]);
  });

  it('ship a CRD for servers before 1.30 that differs only by the selectableFields stanza', () => {
    const [pre] = load('machineoperation-crd-pre-1.30.yaml');
    const main = structuredClone(one('CustomResourceDefinition')) as unknown as {
      spec: { versions: Record<string, unknown>[] };
    };
    for (const version of main.spec.versions) delete version['selectableFields'];
    expect(pre).toEqual(main);
  });

  describe('MachineOperation CRD', () => {
    const crd = one('CustomResourceDefinition');
    const spec = at(crd, 'spec');
    const versions = at(spec, 'versions') as unknown[];
    const v1alpha3 = versions[0];
    const schema = at(v1alpha3, 'schema', 'openAPIV3Schema');

    it('is the cluster-scoped unbounded-cloud.io MachineOperation with short name mop', () => {
      expect(at(spec, 'group')).toBe('unbounded-cloud.io');
      expect(at(spec, 'scope')).toBe('Cluster');
      expect(at(spec, 'names')).toEqual({
        kind: 'MachineOperation',
        listKind: 'MachineOperationList',
        plural: 'machineoperations',
        singular: 'machineoperation',
        shortNames: ['mop'],
      });
    });

    it('serves and stores only v1alpha3, with the status subresource', () => {
      expect(versions).toHaveLength(1);
      expect(at(v1alpha3, 'name')).toBe('v1alpha3');
      expect(at(v1alpha3, 'served')).toBe(true);
      expect(at(v1alpha3, 'storage')).toBe(true);
      expect(at(v1alpha3, 'subresources')).toEqual({ status: {} });
    });

    it('declares spec.machineRef as its only selectable field', () => {
      expect(at(v1alpha3, 'selectableFields')).toEqual([{ jsonPath: '.spec.machineRef' }]);
    });

    it('prints Kind, Machine, Phase and Age', () => {
      expect(at(v1alpha3, 'additionalPrinterColumns')).toEqual([
        { name: 'Kind', type: 'string', jsonPath: '.spec.operationKind' },
        { name: 'Machine', type: 'string', jsonPath: '.spec.machineRef' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ]);
    });

    it('has the MachineOperation spec schema', () => {
      expect(at(schema, 'required')).toEqual(['spec']);
      expect(keys(at(schema, 'properties'))).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      const specSchema = at(schema, 'properties', 'spec');
      expect(at(specSchema, 'required')).toEqual(['operationKind']);
      expect(keys(at(specSchema, 'properties'))).toEqual([
        'machineRef',
        'machineSelector',
        'operationKind',
        'parameters',
        'ttlSecondsAfterFinished',
      ]);
      expect(at(specSchema, 'x-kubernetes-validations', 0, 'rule')).toBe(
        'has(self.machineRef) != has(self.machineSelector)',
      );
      expect(at(specSchema, 'properties', 'machineRef', 'type')).toBe('string');
      expect(keys(at(specSchema, 'properties', 'machineSelector', 'properties'))).toEqual([
        'matchExpressions',
        'matchLabels',
      ]);
      expect(at(specSchema, 'properties', 'operationKind', 'enum')).toEqual([
        'NodeReboot',
        'AgentUpgrade',
        'AgentReset',
        'HostReboot',
        'HostPowerOff',
        'HostPowerOn',
        'HostReplace',
      ]);
      expect(at(specSchema, 'properties', 'parameters', 'additionalProperties')).toEqual({ type: 'string' });
      expect(at(specSchema, 'properties', 'ttlSecondsAfterFinished')).toEqual({
        type: 'integer',
        format: 'int32',
        minimum: 0,
      });
    });

    it('has the MachineOperation status schema', () => {
      const status = at(schema, 'properties', 'status');
      expect(keys(at(status, 'properties'))).toEqual([
        'completedAt',
        'conditions',
        'message',
        'observedMachineGeneration',
        'phase',
        'startedAt',
      ]);
      expect(at(status, 'properties', 'phase', 'enum')).toEqual(['Pending', 'InProgress', 'Complete', 'Failed']);
      expect(at(status, 'properties', 'observedMachineGeneration')).toEqual({ type: 'integer', format: 'int64' });
      expect(at(status, 'properties', 'startedAt')).toEqual({ type: 'string', format: 'date-time' });
      expect(at(status, 'properties', 'completedAt')).toEqual({ type: 'string', format: 'date-time' });
      const conditions = at(status, 'properties', 'conditions');
      expect(at(conditions, 'x-kubernetes-list-type')).toBe('map');
      expect(at(conditions, 'x-kubernetes-list-map-keys')).toEqual(['type']);
      expect(at(conditions, 'items', 'required')).toEqual(['type', 'status', 'reason', 'lastTransitionTime']);
      expect(keys(at(conditions, 'items', 'properties'))).toEqual([
        'lastTransitionTime',
        'message',
        'observedGeneration',
        'reason',
        'status',
        'type',
      ]);
    });
  });

  describe('RBAC', () => {
    it('grants exactly the requests the daemon makes: get/list/watch operations, patch their status', () => {
      expect(at(one('ClusterRole'), 'rules')).toEqual([
        { apiGroups: ['unbounded-cloud.io'], resources: ['machineoperations'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['unbounded-cloud.io'], resources: ['machineoperations/status'], verbs: ['patch'] },
      ]);
    });

    it('binds that ClusterRole', () => {
      const binding = one('ClusterRoleBinding');
      expect(at(binding, 'roleRef')).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'agent-upgrade-daemon',
      });
      expect(at(binding, 'subjects')).toEqual([
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' },
      ]);
    });
  });

  describe('admission policy', () => {
    it('holds node identities to the status of operations whose machineRef names them', () => {
      const policy = one('ValidatingAdmissionPolicy');
      expect(at(policy, 'spec', 'failurePolicy')).toBe('Fail');
      expect(at(policy, 'spec', 'matchConstraints', 'resourceRules')).toEqual([
        {
          apiGroups: ['unbounded-cloud.io'],
          apiVersions: ['*'],
          resources: ['machineoperations/status'],
          operations: ['UPDATE'],
        },
      ]);
      expect(at(policy, 'spec', 'validations', 0, 'expression')).toBe(
        'has(oldObject.spec.machineRef) && oldObject.spec.machineRef == variables.nodeName',
      );
      expect(at(one('ValidatingAdmissionPolicyBinding'), 'spec')).toEqual({
        policyName: 'agent-upgrade-node-status',
        validationActions: ['Deny'],
      });
    });
  });
});
