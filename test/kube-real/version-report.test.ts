/**
 * The agent-version report on a real kube-apiserver (Node,RBAC authorization, NodeRestriction),
 * with the shipped CRD, RBAC and admission policy applied: KubernetesOperationStore, connected as
 * the daemon connects with a node's kubeconfig, merge-patches the annotations on its own Node —
 * which the Node authorizer allows without any RBAC grant on nodes — and is refused on another
 * machine's Node. What the server answered is read from its audit log (codes only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/adapters/common/kubernetes/kube-client.js';
import {
  AGENT_VERSION_ANNOTATION,
  KubernetesOperationStore,
  TRUSTED_METADATA_ANNOTATION,
} from '../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { trustedMetadataText } from '../../src/domain/common/trust/trusted-metadata-text.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import type { KubeIdentity } from '../support/kube/real-apiserver.js';
import { CRD, POLICY, RBAC, RealCluster } from '../support/kube/real-cluster.js';
import { RecordingLogger } from '../support/recording-logger.js';

let cluster: RealCluster;
let nodeA: KubeIdentity;

beforeAll(async () => {
  cluster = await RealCluster.start([CRD, RBAC, POLICY]);
  nodeA = await cluster.node('node-a');
  for (const name of ['node-a', 'node-b']) {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: { kept: 'yes' } } };
    expect((await cluster.admin('POST', '/api/v1/nodes', node)).status).toBe(201);
  }
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
}, 30_000);

/** A store with node A's credentials, reporting for `machineName`. */
async function storeAs(identity: KubeIdentity, machineName: string): Promise<KubernetesOperationStore> {
  return new KubernetesOperationStore({
    client: await KubeClient.connect(identity.kubeconfigPath),
    machineName,
    clock: new SystemClock(),
    logger: new RecordingLogger(),
  });
}

async function annotationsOf(name: string): Promise<Record<string, string>> {
  const answer = await cluster.admin('GET', `/api/v1/nodes/${name}`);
  expect(answer.status, answer.text).toBe(200);
  return (answer.json as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {};
}

const patchCodes = async (name: string): Promise<(number | undefined)[]> =>
  (await cluster.requestsOf('node-a', 'patch'))
    .filter((event) => event.objectRef?.name === name && event.requestURI.startsWith('/api/v1/nodes/'))
    .map((event) => event.responseStatus?.code);

describe('the agent-version report on a real API server', () => {
  it('the shipped RBAC grants the nodes group no verb on nodes: only the Node authorizer lets a node touch its own', async () => {
    // Not a node's user name, so the Node authorizer has no say: this is what RBAC alone grants.
    const rbac = await cluster.server.kubectl(cluster.server.admin, [
      'auth',
      'can-i',
      'patch',
      'nodes/node-a',
      '--as=rbac-only',
      '--as-group=system:nodes',
    ]);
    expect(rbac.stdout.trim()).toBe('no');
    const granted = await cluster.server.kubectl(cluster.server.admin, [
      'auth',
      'can-i',
      'patch',
      'machineoperations.unbounded-cloud.io',
      '--subresource=status',
      '--as=rbac-only',
      '--as-group=system:nodes',
    ]);
    expect(granted.stdout.trim()).toBe('yes');
  });

  it("a node writes the annotations on its own Node (200), leaving the Node's other annotations", async () => {
    const store = await storeAs(nodeA, 'node-a');
    const trusted = trustedMetadataText([{ role: 'timestamp', version: 7, expires: '2027-01-01T00:00:00Z' }]);
    expect(await store.reportAgentVersion('1.2.3', trusted)).toBe('written');
    expect(await annotationsOf('node-a')).toEqual({
      kept: 'yes',
      [AGENT_VERSION_ANNOTATION]: '1.2.3',
      [TRUSTED_METADATA_ANNOTATION]: trusted,
    });
    // A later report replaces the version (a rollback writes the old one again), and a node
    // without signed releases removes the trusted metadata.
    expect(await store.reportAgentVersion('1.2.2', null)).toBe('written');
    expect(await annotationsOf('node-a')).toEqual({ kept: 'yes', [AGENT_VERSION_ANNOTATION]: '1.2.2' });
    expect(await patchCodes('node-a')).toEqual([200, 200]);
  });

  it("is refused on another machine's Node (403, answered `forbidden`), which stays as it was", async () => {
    const store = await storeAs(nodeA, 'node-b');
    expect(await store.reportAgentVersion('9.9.9', null)).toBe('forbidden');
    expect(await annotationsOf('node-b')).toEqual({ kept: 'yes' });
    expect(await patchCodes('node-b')).toEqual([403]);
  });

  it('finds no Node for a machine that has none (404, answered `gone`)', async () => {
    const store = await storeAs(await cluster.node('node-c'), 'node-c');
    expect(await store.reportAgentVersion('1.2.3', null)).toBe('gone');
    expect((await cluster.admin('GET', '/api/v1/nodes/node-c')).status).toBe(404);
  });
});
