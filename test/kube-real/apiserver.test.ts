/**
 * The shipped manifests against a real kube-apiserver (test/support/kube/real-apiserver.ts): the
 * CRD is accepted as written (selectable field included) and its schema is enforced by the server,
 * and the RBAC gives a node identity exactly the verbs the daemon uses.
 */
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealApiServer, type CommandResult, type KubeIdentity } from '../support/kube/real-apiserver.js';
import { waitFor } from '../support/wait-for.js';

const REPO = resolve(import.meta.dirname, '../..');
const CRD = join(REPO, 'deploy/machineoperation-crd.yaml');
const RBAC = join(REPO, 'deploy/agent-upgrade-rbac.yaml');
const EXAMPLE = join(REPO, 'deploy/examples/agent-upgrade-operation.yaml');
const CRD_NAME = 'machineoperations.unbounded-cloud.io';
const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
const MERGE_PATCH = 'application/merge-patch+json';

interface Status {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}
interface Operation {
  readonly metadata: { readonly name: string; readonly resourceVersion?: string };
  readonly spec: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
}

const operation = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): object => ({
  apiVersion: 'unbounded-cloud.io/v1alpha3',
  kind: 'MachineOperation',
  metadata: { name },
  spec,
  ...extra,
});
const upgrade = (machineRef: string): Record<string, unknown> => ({
  machineRef,
  operationKind: 'AgentUpgrade',
  parameters: { downloadURL: 'https://releases.example.com/agent.tar.gz' },
});

/** The events of a finished watch response: one JSON object per line. */
const watchEvents = (text: string): { type: string; object: Operation }[] =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; object: Operation });

let server: RealApiServer;
let applied: CommandResult;
let nodeA: KubeIdentity;

beforeAll(async () => {
  server = await RealApiServer.start();
  console.log(`real kube-apiserver ready in ${server.startupMs} ms at ${server.origin}`);
  applied = await server.kubectl(server.admin, ['apply', '-f', CRD, '-f', RBAC]);
  expect(applied.status, applied.stderr).toBe(0);
  const established = await server.kubectl(server.admin, [
    'wait',
    '--for=condition=Established',
    `crd/${CRD_NAME}`,
    '--timeout=60s',
  ]);
  expect(established.status, established.stderr).toBe(0);
  nodeA = await server.node('node-a');
  // RBAC reads bindings through an informer: the node's grant arrives a moment after the apply.
  const granted = await waitFor(async () => (await server.request(nodeA, 'GET', OPS)).status === 200, 30_000, 200);
  expect(granted).toBe(true);
}, 240_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

describe('the shipped CRD on a real API server', () => {
  it('is applied with kubectl, established, and keeps its selectable field', async () => {
    expect(applied.status).toBe(0);
    expect(applied.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/${CRD_NAME} created`);
    expect(applied.stdout).toContain('clusterrole.rbac.authorization.k8s.io/agent-upgrade-daemon created');
    expect(applied.stdout).toContain('clusterrolebinding.rbac.authorization.k8s.io/agent-upgrade-daemon created');
    const crd = await server.request(
      server.admin,
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`,
    );
    const versions = (crd.json as { spec: { versions: { selectableFields?: unknown }[] } }).spec.versions;
    // Servers before the field went GA drop it silently; this one must keep it.
    expect(versions[0]?.selectableFields).toEqual([{ jsonPath: '.spec.machineRef' }]);
  });

  it('accepts the shipped example operation from the admin', async () => {
    const created = await server.kubectl(server.admin, ['apply', '-f', EXAMPLE]);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toContain('machineoperation.unbounded-cloud.io/upgrade-node-17-v1-4-2 created');
  });

  it('drops a status sent with a create, and prunes undeclared fields with a warning', async () => {
    const body = operation('pruned', { ...upgrade('node-a'), bogusSpecField: 1 }, { status: { phase: 'Complete' } });
    const created = await server.request(server.admin, 'POST', OPS, { body });
    expect(created.status).toBe(201);
    const op = created.json as Operation;
    expect(op.status).toBeUndefined();
    expect(op.spec).not.toHaveProperty('bogusSpecField');
    // RFC 7234 warn-text: code 299, agent "-", the text quoted with its own quotes escaped.
    expect(created.headers['warning']).toBe('299 - "unknown field \\"spec.bogusSpecField\\""');

    const patched = await server.request(server.admin, 'PATCH', `${OPS}/pruned/status`, {
      body: { status: { phase: 'InProgress', bogusStatusField: 'x' } },
      contentType: MERGE_PATCH,
    });
    expect(patched.status).toBe(200);
    expect((patched.json as Operation).status).toEqual({ phase: 'InProgress' });
  });

  it('refuses what the schema forbids with 422', async () => {
    const both = operation('both-targets', { ...upgrade('node-a'), machineSelector: { matchLabels: { a: 'b' } } });
    const refusedCreate = await server.request(server.admin, 'POST', OPS, { body: both });
    expect(refusedCreate.status).toBe(422);
    expect((refusedCreate.json as Status).message).toContain(
      'exactly one of machineRef and machineSelector must be set',
    );

    const kind = await server.request(server.admin, 'POST', OPS, {
      body: operation('bad-kind', { machineRef: 'node-a', operationKind: 'Explode' }),
    });
    expect(kind.status).toBe(422);

    await server.request(server.admin, 'POST', OPS, { body: operation('validated', upgrade('node-a')) });
    for (const status of [{ phase: 'Bogus' }, { startedAt: 'yesterday' }, { conditions: [{ type: 'Ready' }] }]) {
      const patched = await server.request(server.admin, 'PATCH', `${OPS}/validated/status`, {
        body: { status },
        contentType: MERGE_PATCH,
      });
      expect(patched.status, JSON.stringify(status)).toBe(422);
      expect((patched.json as Status).reason).toBe('Invalid');
    }
  });
});

describe('the shipped RBAC for a node identity on a real API server', () => {
  it('lets the node list, watch and field-select operations', async () => {
    await server.request(server.admin, 'POST', OPS, { body: operation('for-node-a', upgrade('node-a')) });
    await server.request(server.admin, 'POST', OPS, { body: operation('for-node-b', upgrade('node-b')) });

    const listed = await server.request(nodeA, 'GET', `${OPS}?fieldSelector=spec.machineRef%3Dnode-a`);
    expect(listed.status).toBe(200);
    const names = (listed.json as { items: Operation[] }).items.map((op) => op.metadata.name);
    expect(names).toContain('for-node-a');
    expect(names).not.toContain('for-node-b');

    // A watch from "now" without a resourceVersion starts with a synthetic ADDED per object.
    const watched = await server.request(
      nodeA,
      'GET',
      `${OPS}?watch=1&timeoutSeconds=1&fieldSelector=spec.machineRef%3Dnode-a`,
      { timeoutMs: 10_000 },
    );
    expect(watched.status).toBe(200);
    const events = watchEvents(watched.text);
    expect(events.map((event) => [event.type, event.object.metadata.name])).toContainEqual(['ADDED', 'for-node-a']);
    expect(events.every((event) => event.object.spec['machineRef'] === 'node-a')).toBe(true);
  });

  it('lets the node patch an operation status', async () => {
    await server.request(server.admin, 'POST', OPS, { body: operation('node-patches', upgrade('node-a')) });
    const patched = await server.request(nodeA, 'PATCH', `${OPS}/node-patches/status`, {
      body: { status: { phase: 'InProgress', message: 'downloading' } },
      contentType: MERGE_PATCH,
    });
    expect(patched.status, patched.text).toBe(200);
    expect((patched.json as Operation).status).toEqual({ phase: 'InProgress', message: 'downloading' });
  });

  it('forbids the node what the RBAC does not grant', async () => {
    await server.request(server.admin, 'POST', OPS, { body: operation('node-forbidden', upgrade('node-a')) });
    const attempts = [
      server.request(nodeA, 'DELETE', `${OPS}/node-forbidden`),
      server.request(nodeA, 'POST', OPS, { body: operation('node-creates', upgrade('node-a')) }),
      server.request(nodeA, 'PATCH', `${OPS}/node-forbidden`, {
        body: { spec: { machineRef: 'node-z' } },
        contentType: MERGE_PATCH,
      }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status, answer.text).toBe(403);
      expect((answer.json as Status).reason).toBe('Forbidden');
    }
    const canI = await server.kubectl(nodeA, ['auth', 'can-i', 'delete', 'machineoperations.unbounded-cloud.io']);
    expect(canI.stdout.trim()).toBe('no');
    const still = await server.request(server.admin, 'GET', `${OPS}/node-forbidden`);
    expect(still.status).toBe(200);
  });

  it('refuses a client without a certificate from the client CA with 401', async () => {
    const answer = await server.request('anonymous', 'GET', OPS);
    expect(answer.status).toBe(401);
  });
});

describe('watches by a node identity on a real API server', () => {
  it('sends DELETED when an operation leaves the watched field selector and ADDED when it joins', async () => {
    await server.request(server.admin, 'POST', OPS, { body: operation('leaves', upgrade('node-a')) });
    await server.request(server.admin, 'POST', OPS, { body: operation('joins', upgrade('node-c')) });
    const from = ((await server.request(nodeA, 'GET', OPS)).json as { metadata: { resourceVersion: string } }).metadata;
    for (const [name, machineRef] of [
      ['leaves', 'node-c'],
      ['joins', 'node-a'],
    ] as const) {
      const moved = await server.request(server.admin, 'PATCH', `${OPS}/${name}`, {
        body: { spec: { machineRef } },
        contentType: MERGE_PATCH,
      });
      expect(moved.status, moved.text).toBe(200);
    }
    // From an explicit resourceVersion the watch replays both moves however late it connects.
    const query = `watch=1&resourceVersion=${from.resourceVersion}&timeoutSeconds=2&fieldSelector=spec.machineRef%3Dnode-a`;
    const watched = await server.request(nodeA, 'GET', `${OPS}?${query}`, { timeoutMs: 10_000 });
    const events = watchEvents(watched.text);
    expect(events.map((event) => [event.type, event.object.metadata.name])).toEqual([
      ['DELETED', 'leaves'],
      ['ADDED', 'joins'],
    ]);
  });
});
