/**
 * Nodes cannot forge each other's results, on a real kube-apiserver with the shipped CRD, RBAC
 * and admission policy (deploy/agent-upgrade-admission-policy.yaml): node A is refused on node B's
 * operation and on a selector-targeted one, node B and the admin are not. And the RBAC grants
 * exactly what the daemon uses, while the Node authorizer gives a node its own Node object (read
 * and annotate) and nothing of another's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeIdentity, KubeResponse } from '../support/kube/real-apiserver.js';
import { waitFor } from '../support/wait-for.js';
import { CRD, MERGE_PATCH, OPS, POLICY, RBAC, RealCluster, upgrade } from '../support/kube/real-cluster.js';

const JSON_PATCH = 'application/json-patch+json';

let cluster: RealCluster;
let nodeA: KubeIdentity;
let nodeB: KubeIdentity;

const patchStatus = (who: KubeIdentity, name: string, message: string): Promise<KubeResponse> =>
  cluster.server.request(who, 'PATCH', `${OPS}/${name}/status`, {
    body: { status: { message } },
    contentType: MERGE_PATCH,
  });
const reasonOf = (answer: KubeResponse): unknown => (answer.json as { reason?: unknown } | undefined)?.reason;

beforeAll(async () => {
  cluster = await RealCluster.start([CRD, RBAC, POLICY]);
  [nodeA, nodeB] = await Promise.all([cluster.node('node-a'), cluster.node('node-b')]);
  for (const name of ['node-a', 'node-b']) {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { pool: 'blue' } } };
    expect((await cluster.admin('POST', '/api/v1/nodes', node)).status).toBe(201);
  }
  // Policies reach admission through an informer: wait (on an operation of its own) until it bites.
  await cluster.create('policy-probe', upgrade('node-b'));
  expect(
    await waitFor(async () => (await patchStatus(nodeA, 'policy-probe', 'probe')).status === 403, 30_000, 200),
  ).toBe(true);
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
}, 30_000);

describe('the admission policy on a real API server', () => {
  it("refuses node A on node B's operation (403 Forbidden, by the policy: RBAC allows the verb) and leaves it", async () => {
    await cluster.create('op-of-b', upgrade('node-b'));
    const canPatch = await cluster.server.kubectl(nodeA, [
      'auth',
      'can-i',
      'patch',
      'machineoperations.unbounded-cloud.io',
      '--subresource=status',
    ]);
    expect(canPatch.stdout.trim()).toBe('yes');
    const merge = await patchStatus(nodeA, 'op-of-b', 'forged by node-a');
    const jsonPatch = await cluster.server.request(nodeA, 'PATCH', `${OPS}/op-of-b/status`, {
      body: [{ op: 'add', path: '/status', value: { phase: 'Complete' } }],
      contentType: JSON_PATCH,
    });
    for (const answer of [merge, jsonPatch]) {
      expect(answer.status, answer.text).toBe(403);
      expect(reasonOf(answer)).toBe('Forbidden');
    }
    expect(await cluster.status('op-of-b')).toBeUndefined();
  });

  it('lets node B write its own operation and the admin write any', async () => {
    await cluster.create('op-of-b-too', upgrade('node-b'));
    await cluster.create('op-of-a', upgrade('node-a'));
    expect((await patchStatus(nodeB, 'op-of-b-too', 'by node-b')).status).toBe(200);
    expect((await patchStatus(nodeA, 'op-of-a', 'by node-a')).status).toBe(200);
    for (const name of ['op-of-b-too', 'op-of-a'])
      expect((await patchStatus(cluster.server.admin, name, 'by the admin')).status).toBe(200);
    expect(await cluster.status('op-of-b-too')).toEqual({ message: 'by the admin' });
  });

  it('refuses every node on a selector-targeted operation, even one whose labels it matches; the admin may write it', async () => {
    await cluster.create('by-selector', {
      operationKind: 'AgentUpgrade',
      machineSelector: { matchLabels: { pool: 'blue' } },
      parameters: { downloadURL: 'https://releases.example.com/agent.tar.gz' },
    });
    for (const node of [nodeA, nodeB]) {
      const answer = await patchStatus(node, 'by-selector', 'fan it out');
      expect(answer.status, answer.text).toBe(403);
      expect(reasonOf(answer)).toBe('Forbidden');
    }
    expect((await patchStatus(cluster.server.admin, 'by-selector', 'admin')).status).toBe(200);
  });
});

describe('the shipped RBAC and the Node authorizer on a real API server', () => {
  it('grant a node get, list and watch of operations and patch of their status, and nothing else on them', async () => {
    await cluster.create('rbac-op', upgrade('node-a'));
    const as = (method: string, path: string, body?: unknown, contentType?: string) =>
      cluster.server.request(nodeA, method, path, {
        ...(body === undefined ? {} : { body }),
        ...(contentType === undefined ? {} : { contentType }),
      });
    const allowed = [
      await as('GET', `${OPS}/rbac-op`),
      await as('GET', `${OPS}?fieldSelector=spec.machineRef%3Dnode-a`),
      await as('GET', `${OPS}?watch=1&timeoutSeconds=1`),
      await as('PATCH', `${OPS}/rbac-op/status`, { status: { message: 'mine' } }, MERGE_PATCH),
    ];
    expect(allowed.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const current = (await as('GET', `${OPS}/rbac-op`)).json;
    const refused = [
      await as('GET', `${OPS}/rbac-op/status`),
      await as('PUT', `${OPS}/rbac-op/status`, current),
      await as('PUT', `${OPS}/rbac-op`, current),
      await as('PATCH', `${OPS}/rbac-op`, { metadata: { labels: { a: 'b' } } }, MERGE_PATCH),
      await as('POST', OPS, {
        apiVersion: 'unbounded-cloud.io/v1alpha3',
        kind: 'MachineOperation',
        metadata: { name: 'x' },
        spec: upgrade('node-a'),
      }),
      await as('DELETE', `${OPS}/rbac-op`),
    ];
    expect(refused.map((answer) => [answer.status, reasonOf(answer)])).toEqual(refused.map(() => [403, 'Forbidden']));
  });

  it("let a node read and annotate its own Node object, and neither read nor write another's", async () => {
    const annotate = (who: KubeIdentity, name: string) =>
      cluster.server.request(who, 'PATCH', `/api/v1/nodes/${name}`, {
        body: { metadata: { annotations: { 'unbounded-cloud.io/agent-version': '1.4.2' } } },
        contentType: MERGE_PATCH,
      });
    expect((await cluster.server.request(nodeA, 'GET', '/api/v1/nodes/node-a')).status).toBe(200);
    expect(
      (await cluster.server.request(nodeA, 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a')).status,
    ).toBe(200);
    const own = await annotate(nodeA, 'node-a');
    expect(own.status, own.text).toBe(200);
    expect((own.json as { metadata: { annotations: Record<string, string> } }).metadata.annotations).toMatchObject({
      'unbounded-cloud.io/agent-version': '1.4.2',
    });
    const others = [
      await cluster.server.request(nodeA, 'GET', '/api/v1/nodes/node-b'),
      await cluster.server.request(nodeA, 'GET', '/api/v1/nodes'),
      await annotate(nodeA, 'node-b'),
    ];
    expect(others.map((answer) => [answer.status, reasonOf(answer)])).toEqual(others.map(() => [403, 'Forbidden']));
  });

  it('leave every operation of every machine readable by any node (what a field selector cannot restrict)', async () => {
    await cluster.create('readable-of-b', upgrade('node-b'));
    const all = await cluster.server.request(nodeA, 'GET', OPS);
    expect(all.status).toBe(200);
    const names = ((all.json as { items: { metadata: { name: string } }[] }).items ?? []).map((op) => op.metadata.name);
    expect(names).toContain('readable-of-b');
    expect((await cluster.server.request(nodeA, 'GET', `${OPS}/readable-of-b`)).status).toBe(200);
  });
});
