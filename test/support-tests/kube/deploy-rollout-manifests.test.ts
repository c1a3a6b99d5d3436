// The rollout controller's manifests in deploy/ (the AgentRelease and AgentRollout CRDs and the
// controller's RBAC) and their examples in deploy/examples/: the CRDs' shape, their CEL rules
// (each checked by a hand-written twin, including the transition rules), the examples and the
// planner's own statuses against the schemas, the examples accepted by the planner, and kubectl
// mapping every manifest through discovery.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEqual } from '../../../src/domain/fleet/status/json-equal.js';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { parseReleaseSpec } from '../../../src/domain/fleet/spec/release-spec.js';
import type { NodeFacts, ReleaseObject } from '../../../src/domain/fleet/order/snapshot.js';
import { Prng } from '../../sim/harness/index.js';
import { randomScenario } from '../../domain/rollout/scenarios.js';
import { runRollout } from '../../domain/rollout/run-rollout.js';
import { validate, withDefaults, type Json, type Rule, type Schema } from './crd-schema.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy');
const EXAMPLES = join(DEPLOY, 'examples');
const KUBECTL = '/usr/bin/kubectl';

type Doc = { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
const load = (path: string): Doc[] => loadAll(readFileSync(path, 'utf8')) as Doc[];
const [releaseCrd] = load(join(DEPLOY, 'agentrelease-crd.yaml')) as [Doc];
const [rolloutCrd] = load(join(DEPLOY, 'agentrollout-crd.yaml')) as [Doc];
const rbac = load(join(DEPLOY, 'agent-upgrade-controller-rbac.yaml'));
const releaseExamples = load(join(EXAMPLES, 'agent-release.yaml'));
const [rolloutExample] = load(join(EXAMPLES, 'agent-rollout.yaml')) as [Doc];
const schemaOf = (crd: Doc): Schema => crd['spec'].versions[0].schema.openAPIV3Schema as Schema;
const RELEASE = schemaOf(releaseCrd);
const ROLLOUT = schemaOf(rolloutCrd);

const PERCENT = /^(100|[1-9]?[0-9])%$/;
/** Every CEL rule of the two CRDs, and what it means. */
const RULES = new Map<string, Rule>([
  [
    'self.version == oldSelf.version && self.artifacts == oldSelf.artifacts',
    (s, o) => s.version === o.version && jsonEqual(s.artifacts, o.artifacts),
  ],
  ['size(self.metadata.name) <= 63', (s) => [...String(s.metadata?.name ?? '')].length <= 63],
  [
    "self.strategy.onFailure == 'Halt' || has(self.rollback)",
    (s) => s.strategy.onFailure === 'Halt' || s.rollback !== undefined,
  ],
  ["self.state != 'RollBack' || has(self.rollback)", (s) => s.state !== 'RollBack' || s.rollback !== undefined],
  [
    '!has(self.rollback) || self.rollback.releaseRef.name != self.releaseRef.name',
    (s) => s.rollback === undefined || s.rollback.releaseRef.name !== s.releaseRef.name,
  ],
  [
    "oldSelf.state == 'Preview' || self.releaseRef.name == oldSelf.releaseRef.name",
    (s, o) => o.state === 'Preview' || s.releaseRef.name === o.releaseRef.name,
  ],
  ["oldSelf.state == 'Preview' || self.state != 'Preview'", (s, o) => o.state === 'Preview' || s.state !== 'Preview'],
  [
    "oldSelf.state != 'RollBack' || self.state == 'RollBack' || self.state == 'Abort'",
    (s, o) => o.state !== 'RollBack' || ['RollBack', 'Abort'].includes(s.state),
  ],
  [
    "oldSelf.state != 'Abort' || self.state == 'Abort' || self.state == 'RollBack'",
    (s, o) => o.state !== 'Abort' || ['Abort', 'RollBack'].includes(s.state),
  ],
  [
    "oldSelf.state != 'RollBack' || self.rollback.releaseRef.name == oldSelf.rollback.releaseRef.name",
    (s, o) => o.state !== 'RollBack' || s.rollback?.releaseRef.name === o.rollback?.releaseRef.name,
  ],
  ['self.all(w, self.exists_one(x, x.name == w.name))', (s) => new Set(s.map((w: Doc) => w['name'])).size === s.length],
  ['has(self[size(self) - 1].percent) && self[size(self) - 1].percent == 100', (s) => s[s.length - 1]?.percent === 100],
  ['has(self.count) != has(self.percent)', (s) => 'count' in s !== 'percent' in s],
  [
    "type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",
    (s) => (typeof s === 'number' ? s >= 0 : PERCENT.test(s)),
  ],
]);

function rulesIn(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(rulesIn);
  if (typeof schema !== 'object' || schema === null) return [];
  const own = ((schema as Doc)['x-kubernetes-validations'] ?? []).map((entry: Doc) => entry['rule'] as string);
  return [...own, ...Object.values(schema).flatMap(rulesIn)];
}

const check = (doc: Doc, schema: Schema, old?: Doc): string[] =>
  validate(
    withDefaults(doc as Json, schema) as Json,
    schema,
    RULES,
    old === undefined ? undefined : (withDefaults(old as Json, schema) as Json),
  );
const edit = (doc: Doc, change: (copy: Doc) => void): Doc => {
  const copy = structuredClone(doc);
  change(copy);
  return copy;
};

describe('the rollout CRDs', () => {
  it('are the cluster-scoped agent-upgrade.dev/v1alpha1 AgentRelease (arel) and AgentRollout (arl) with a status subresource', () => {
    for (const [crd, kind, short] of [
      [releaseCrd, 'AgentRelease', 'arel'],
      [rolloutCrd, 'AgentRollout', 'arl'],
    ] as const) {
      const plural = `${kind.toLowerCase()}s`;
      expect(crd['metadata'].name).toBe(`${plural}.agent-upgrade.dev`);
      expect(crd['spec']).toMatchObject({ group: 'agent-upgrade.dev', scope: 'Cluster' });
      expect(crd['spec'].names).toEqual({
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        shortNames: [short],
      });
      expect(crd['spec'].versions).toHaveLength(1);
      expect(crd['spec'].versions[0]).toMatchObject({
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
      });
    }
  });

  it('print Release, Phase, Wave, Progress, In-Flight, Failed and Age for a rollout', () => {
    expect(rolloutCrd['spec'].versions[0].additionalPrinterColumns).toEqual([
      { name: 'Release', type: 'string', jsonPath: '.spec.releaseRef.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Wave', type: 'string', jsonPath: '.status.currentWave' },
      { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
      { name: 'In-Flight', type: 'integer', jsonPath: '.status.counts.inFlight' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.counts.failed' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  it('carry exactly the CEL rules this test knows the meaning of', () => {
    const used = new Set([...rulesIn(RELEASE), ...rulesIn(ROLLOUT)]);
    expect([...used].sort()).toEqual([...RULES.keys()].sort());
  });

  it('default what the planner defaults, to the same values', () => {
    const spec = {
      releaseRef: { name: 'r' },
      targets: { selector: {} },
      strategy: {
        waves: [
          { name: 'a', count: 1 },
          { name: 'b', percent: 100 },
        ],
      },
    };
    const specSchema = (ROLLOUT['properties'] as Doc)['spec'] as Schema;
    const defaulted = withDefaults(spec as unknown as Json, specSchema) as Doc;
    expect(defaulted['state']).toBe('Preview');
    expect(defaulted['strategy']).toMatchObject({ operationTimeout: '30m', onFailure: 'Halt', quarantineOnHalt: true });
    expect(parseRolloutSpec(defaulted)).toEqual(parseRolloutSpec(spec));
    const windows = { ...spec, schedule: { windows: [{ start: '09:00', duration: '1h' }] } };
    expect(parseRolloutSpec(withDefaults(windows as unknown as Json, specSchema))).toEqual(parseRolloutSpec(windows));
  });
});

describe('the CRD rules', () => {
  it('accept the examples', () => {
    for (const release of releaseExamples) expect(check(release, RELEASE), release['metadata'].name).toEqual([]);
    expect(check(rolloutExample, ROLLOUT)).toEqual([]);
  });

  it.each<[string, (doc: Doc) => void]>([
    ['a maxInFlight without %', (d) => (d['spec'].strategy.waves[0].maxInFlight = '10')],
    ['a percentage above 100', (d) => (d['spec'].strategy.maxUnavailable = '150%')],
    ['a negative budget', (d) => (d['spec'].strategy.waves[0].failureBudget = -1)],
    ['a wave with count and percent', (d) => (d['spec'].strategy.waves[0].count = 5)],
    ['a last wave short of 100%', (d) => (d['spec'].strategy.waves[3].percent = 90)],
    ['two waves of one name', (d) => (d['spec'].strategy.waves[1].name = 'canary')],
    ['an unknown state', (d) => (d['spec'].state = 'Go')],
    ['a bake of days', (d) => (d['spec'].strategy.waves[0].bake = '2d')],
    [
      'a rolling-back onFailure without rollback',
      (d) => {
        d['spec'].strategy.onFailure = 'RollBackAll';
        delete d['spec'].rollback;
      },
    ],
    ['a rollback to the same release', (d) => (d['spec'].rollback.releaseRef.name = d['spec'].releaseRef.name)],
    ['an unknown field', (d) => (d['spec'].paused = true)],
    ['a name of 64 characters', (d) => (d['metadata'].name = 'a'.repeat(64))],
    ['a window start without leading zero', (d) => (d['spec'].schedule.windows[0].start = '9:00')],
    ['a wave name that is no DNS label', (d) => (d['spec'].strategy.waves[0].name = 'Canary')],
  ])('refuse a rollout with %s', (_what, change) => {
    expect(check(edit(rolloutExample, change), ROLLOUT)).not.toEqual([]);
  });

  it.each<[string, (doc: Doc) => void]>([
    ['an upper-case digest', (d) => (d['spec'].artifacts[0].sha256 = 'A'.repeat(64))],
    ['an unknown architecture', (d) => (d['spec'].artifacts[0].arch = 'riscv64')],
    ['user information in the URL', (d) => (d['spec'].artifacts[0].downloadURL = 'https://u:p@h/a.tar.gz')],
    ['a fragment in the URL', (d) => (d['spec'].artifacts[0].downloadURL = 'https://h/a.tar.gz#x')],
    ['an architecture twice', (d) => (d['spec'].artifacts[1].arch = 'amd64')],
    ['no version', (d) => delete d['spec'].version],
    ['a version that is not semver', (d) => (d['spec'].version = '1.4')],
  ])('refuse a release with %s', (_what, change) => {
    expect(check(edit(releaseExamples[0] as Doc, change), RELEASE)).not.toEqual([]);
  });

  const state = (doc: Doc, value: string): Doc => edit(doc, (copy) => (copy['spec'].state = value));
  it.each<[string, string, boolean]>([
    ['Preview', 'Run', true],
    ['Run', 'Pause', true],
    ['Pause', 'Run', true],
    ['Run', 'RollBack', true],
    ['RollBack', 'Abort', true],
    ['Abort', 'RollBack', true],
    ['Run', 'Preview', false],
    ['Pause', 'Preview', false],
    ['RollBack', 'Run', false],
    ['RollBack', 'Pause', false],
    ['Abort', 'Run', false],
    ['Abort', 'Pause', false],
  ])('treat state %s → %s as allowed: %s', (from, to, allowed) => {
    const problems = check(state(rolloutExample, to), ROLLOUT, state(rolloutExample, from));
    expect(problems.length === 0, problems.join('; ')).toBe(allowed);
  });

  it('keep releaseRef mutable in Preview only, and the rollback release once rolling back', () => {
    const other = (doc: Doc): Doc => edit(doc, (copy) => (copy['spec'].releaseRef.name = 'aks-flex-node-v1.5.0'));
    expect(check(other(rolloutExample), ROLLOUT, rolloutExample)).toEqual([]);
    const running = state(rolloutExample, 'Run');
    expect(check(other(running), ROLLOUT, running)).toHaveLength(1);
    const rollingBack = state(rolloutExample, 'RollBack');
    const moved = edit(rollingBack, (copy) => (copy['spec'].rollback.releaseRef.name = 'aks-flex-node-v1.3.9'));
    expect(check(moved, ROLLOUT, rollingBack)).toHaveLength(1);
  });

  it('keep a release immutable but for its quarantine', () => {
    const release = releaseExamples[0] as Doc;
    const quarantined = edit(release, (copy) => (copy['spec'].quarantine = { quarantined: true, reason: 'halted' }));
    expect(check(quarantined, RELEASE, release)).toEqual([]);
    expect(check(release, RELEASE, quarantined)).toEqual([]);
    expect(
      check(
        edit(release, (copy) => (copy['spec'].version = '1.4.3')),
        RELEASE,
        release,
      ),
    ).toHaveLength(1);
    const swapped = edit(release, (copy) => (copy['spec'].artifacts[0].sha256 = 'c'.repeat(64)));
    expect(check(swapped, RELEASE, release)).toHaveLength(1);
  });
});

describe('the planner and the schemas', () => {
  const releases = new Map<string, ReleaseObject>(
    releaseExamples.map((doc) => [
      doc['metadata'].name,
      {
        name: doc['metadata'].name,
        uid: `uid-${doc['metadata'].name}`,
        generation: 1,
        resourceVersion: '1',
        spec: doc['spec'],
        status: {},
      },
    ]),
  );

  it('accept the examples as they are stored (with the defaults)', () => {
    for (const doc of releaseExamples) expect(parseReleaseSpec(doc['spec']).ok).toBe(true);
    const stored = withDefaults(rolloutExample as Json, ROLLOUT) as Doc;
    expect(parseRolloutSpec(stored['spec'])).toEqual(parseRolloutSpec(rolloutExample['spec']));
    expect(parseRolloutSpec(stored['spec']).ok).toBe(true);
  });

  it('preview the example on 300 nodes: waves, diverse canaries, nothing created', () => {
    const nodes: NodeFacts[] = Array.from({ length: 300 }, (_, index) => ({
      name: `node-${index}`,
      uid: `uid-${index}`,
      labels: {
        'node-role.kubernetes.io/agent': '',
        'kubernetes.io/arch': index % 5 === 0 ? 'arm64' : 'amd64',
        'topology.kubernetes.io/zone': `zone-${index % 3}`,
      },
      annotations: {},
    }));
    const stored = withDefaults(rolloutExample as Json, ROLLOUT) as Doc;
    const plan = planRollout(
      {
        rollout: {
          name: stored['metadata'].name,
          uid: 'uid',
          generation: 1,
          resourceVersion: '1',
          annotations: {},
          spec: stored['spec'],
          status: {},
        },
        release: releases.get(stored['spec'].releaseRef.name) ?? null,
        rollbackRelease: releases.get(stored['spec'].rollback.releaseRef.name) ?? null,
        nodes,
        children: [],
        foreignOperations: [],
      },
      Date.UTC(2025, 0, 6, 9, 0, 0),
    );
    expect(plan.actions.map((action) => action.kind)).toEqual(['UpdateRolloutStatus', 'RecordEvent']);
    expect(plan.status.phase).toBe('Preview');
    expect(plan.status.waves.map((wave) => wave.size)).toEqual([3, 27, 120, 150]);
    const archs = new Set(
      plan.status.preview?.canaries.map(
        (name) => nodes.find((node) => node.name === name)?.labels['kubernetes.io/arch'],
      ),
    );
    expect(archs).toEqual(new Set(['amd64', 'arm64']));
    expect(check({ ...stored, status: plan.status }, ROLLOUT)).toEqual([]);
  });

  it("write only statuses the rollout CRD's status schema accepts, whatever happens", () => {
    let checked = 0;
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { world, description } = randomScenario(
        seed,
        new Prng(seed),
        ['many', 'everywhere', 'arm64', 'hangs', 'invalid'],
        300,
      );
      runRollout(world, {
        maxSteps: 3000,
        approve: true,
        check: (at) => {
          const problems = check(
            {
              apiVersion: 'agent-upgrade.dev/v1alpha1',
              kind: 'AgentRollout',
              metadata: { name: at.name },
              spec: at.spec,
              status: at.status as Doc,
            },
            ROLLOUT,
          );
          expect(problems, `${description}, step ${at.step}`).toEqual([]);
          checked += 1;
        },
      });
    }
    expect(checked).toBeGreaterThan(50);
  });
});

describe('the controller RBAC', () => {
  const find = (kind: string): Doc => {
    const found = rbac.filter((doc) => doc['kind'] === kind);
    expect(found, kind).toHaveLength(1);
    return found[0] as Doc;
  };

  it('is a ServiceAccount in its own namespace, bound to one ClusterRole and one leader-election Role', () => {
    expect(rbac.map((doc) => `${doc['kind']} ${doc['metadata'].namespace ?? '-'}/${doc['metadata'].name}`)).toEqual([
      'Namespace -/agent-upgrade-system',
      'ServiceAccount agent-upgrade-system/agent-upgrade-controller',
      'ClusterRole -/agent-upgrade-controller',
      'ClusterRoleBinding -/agent-upgrade-controller',
      'Role agent-upgrade-system/agent-upgrade-controller-leader-election',
      'RoleBinding agent-upgrade-system/agent-upgrade-controller-leader-election',
    ]);
    const subject = { kind: 'ServiceAccount', name: 'agent-upgrade-controller', namespace: 'agent-upgrade-system' };
    expect(find('ClusterRoleBinding')['subjects']).toEqual([subject]);
    expect(find('ClusterRoleBinding')['roleRef']).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'agent-upgrade-controller',
    });
    expect(find('RoleBinding')['subjects']).toEqual([subject]);
    expect(find('RoleBinding')['roleRef']).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'agent-upgrade-controller-leader-election',
    });
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
    expect(find('Role')['rules']).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
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
