/**
 * The client in the networks it meets, against a real kube-apiserver: an HTTP CONNECT proxy from
 * the kubeconfig's proxy-url or from HTTPS_PROXY (a counting proxy on loopback that maps a server
 * name to 127.0.0.1), tls-server-name, several KUBECONFIG files merged, machineSelector
 * operations delivered beside the server-side field selector (and without it), and status
 * conditions that keep their transition time under the real schema.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load, dump } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, type ConnectOptions } from '../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { ClusterError } from '../../src/domain/common/port-errors.js';
import type { Clock } from '../../src/ports/common/clock.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import { startConnectProxy, type ConnectProxy } from '../support/kube/connect-proxy.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../support/kube/kubeconfig-builder.js';
import { RealApiServer, type KubeIdentity } from '../support/kube/real-apiserver.js';
import { makeScratch } from '../support/real-tree.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { waitFor } from '../support/wait-for.js';

const REPO = resolve(import.meta.dirname, '../..');
const CRD = join(REPO, 'deploy/machineoperation-crd.yaml');
const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
/** A server name that resolves nowhere: only the proxy (which maps it to 127.0.0.1) can reach it. */
const NAME = 'kube.test';

let server: RealApiServer;
let scratch: ReturnType<typeof makeScratch>;
let proxy: ConnectProxy;
let nodeA: KubeIdentity;
let nodeB: KubeIdentity;
let port: string;

beforeAll(async () => {
  server = await RealApiServer.start();
  scratch = makeScratch('kube-real-network-');
  proxy = await startConnectProxy([NAME]);
  port = new URL(server.origin).port;
  const applied = await server.kubectl(server.admin, [
    'apply',
    '-f',
    CRD,
    '-f',
    join(REPO, 'deploy/agent-upgrade-rbac.yaml'),
  ]);
  expect(applied.status, applied.stderr).toBe(0);
  const established = await server.kubectl(server.admin, [
    'wait',
    '--for=condition=Established',
    'crd/machineoperations.unbounded-cloud.io',
    '--timeout=60s',
  ]);
  expect(established.status, established.stderr).toBe(0);
  [nodeA, nodeB] = await Promise.all([server.node('node-a'), server.node('node-b')]);
  expect(await waitFor(async () => (await server.request(nodeA, 'GET', OPS)).status === 200, 30_000, 200)).toBe(true);
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { pool: 'flex' } } };
  expect((await server.request(server.admin, 'POST', '/api/v1/nodes', { body: node })).status).toBe(201);
}, 240_000);

afterAll(async () => {
  await proxy?.close();
  await server?.stop();
  scratch?.cleanup();
}, 30_000);

let written = 0;
function kubeconfigFor(identity: KubeIdentity, cluster: Record<string, unknown>): string {
  const user = { 'client-certificate': identity.certPath, 'client-key': identity.keyPath };
  return writeKubeconfigFile(
    join(scratch.root, `kubeconfig-${++written}`),
    kubeconfigDocument({ 'certificate-authority': server.caPath, ...cluster }, user),
  );
}

const operation = (name: string, target: Record<string, unknown>) => ({
  apiVersion: 'unbounded-cloud.io/v1alpha3',
  kind: 'MachineOperation',
  metadata: { name },
  spec: { ...target, operationKind: 'AgentUpgrade', parameters: { downloadURL: 'https://x/a.tgz' } },
});
async function create(name: string, target: Record<string, unknown>): Promise<string> {
  const answer = await server.request(server.admin, 'POST', OPS, { body: operation(name, target) });
  expect(answer.status, answer.text).toBe(201);
  return (answer.json as { metadata: { uid: string } }).metadata.uid;
}

/** The names the stream yields until it has every one of `names` (bounded); others are collected too. */
async function collect(stream: AsyncIterator<AgentUpgradeRequest>, names: readonly string[], timeoutMs = 30_000) {
  const seen: string[] = [];
  const deadlineMs = Date.now() + timeoutMs;
  while (!names.every((name) => seen.includes(name))) {
    const item = await Promise.race([
      stream.next(),
      new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), Math.max(0, deadlineMs - Date.now()))),
    ]);
    if (item === 'timeout' || item.done === true) break;
    seen.push(item.value.operation.name);
  }
  return seen;
}

function storeOf(client: KubeClient, clock: Clock = new SystemClock()): KubernetesOperationStore {
  return new KubernetesOperationStore({
    client,
    machineName: 'node-a',
    clock,
    logger: new RecordingLogger(),
    stream: { watchTimeoutMinSeconds: 2, watchTimeoutMaxSeconds: 4, retryDelayMs: 100, retryDelayMaxMs: 500 },
  });
}

/** The client with its list and watch queries recorded. */
function recording(client: KubeClient): { client: KubeClient; selectors: (string | undefined)[] } {
  const selectors: (string | undefined)[] = [];
  const wrapped = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if ((property === 'list' || property === 'watch') && typeof value === 'function')
        return (query: { fieldSelector?: string }, ...rest: unknown[]) => {
          selectors.push(query.fieldSelector);
          return (value as (...args: unknown[]) => unknown).call(target, query, ...rest);
        };
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { client: wrapped, selectors };
}

describe('an HTTP CONNECT proxy and tls-server-name, on a real API server', () => {
  it("tunnels every request through the kubeconfig's proxy-url, the watch included", async () => {
    const tunnelsBefore = proxy.tunnels.length;
    const path = kubeconfigFor(nodeA, {
      server: `https://${NAME}:${port}`,
      'tls-server-name': 'localhost',
      'proxy-url': proxy.url,
    });
    // Even with a proxy in the environment that says otherwise, and NO_PROXY covering the name.
    const client = await KubeClient.connect(path, { env: { HTTPS_PROXY: 'http://127.0.0.1:9', NO_PROXY: NAME } });
    expect(await client.authenticatedUser()).toBe('system:node:node-a');
    const stop = new AbortController();
    try {
      const stream = storeOf(client).watch(stop.signal)[Symbol.asyncIterator]();
      const delivered = collect(stream, ['through-the-proxy']);
      // The JSON requests' pool, then one watch per scope, each in a tunnel of its own.
      expect(await waitFor(() => proxy.tunnels.length >= tunnelsBefore + 3, 15_000)).toBe(true);
      await create('through-the-proxy', { machineRef: 'node-a' });
      expect(await delivered).toContain('through-the-proxy');
    } finally {
      stop.abort();
    }
    expect(new Set(proxy.tunnels.slice(tunnelsBefore))).toEqual(new Set([`${NAME}:${port}`]));
  });

  it('checks the certificate against tls-server-name: without it (or with another name) the server is refused', async () => {
    for (const cluster of [{}, { 'tls-server-name': 'other.example' }]) {
      const path = kubeconfigFor(nodeA, { server: `https://${NAME}:${port}`, 'proxy-url': proxy.url, ...cluster });
      const client = await KubeClient.connect(path);
      const before = proxy.tunnels.length;
      await expect(client.list({ limit: 1 })).rejects.toMatchObject({ constructor: ClusterError, status: null });
      // The tunnel was opened: it is the certificate check that refused.
      expect(proxy.tunnels.length).toBe(before + 1);
    }
  });

  it.each(['HTTPS_PROXY', 'https_proxy'])(
    'takes %s from the environment, but never for a loopback server',
    async (variable) => {
      const env: ConnectOptions['env'] = { [variable]: proxy.url };
      const before = proxy.tunnels.length;
      const named = await KubeClient.connect(
        kubeconfigFor(nodeB, { server: `https://${NAME}:${port}`, 'tls-server-name': 'localhost' }),
        { env },
      );
      expect(await named.authenticatedUser()).toBe('system:node:node-b');
      expect(proxy.tunnels.length).toBe(before + 1);
      const loopback = await KubeClient.connect(kubeconfigFor(nodeB, { server: server.origin }), { env });
      expect(await loopback.authenticatedUser()).toBe('system:node:node-b');
      expect(proxy.tunnels.length).toBe(before + 1);
    },
  );
});

describe('several KUBECONFIG files, on a real API server', () => {
  it('are merged as kubectl merges them: first file wins per name, current-context from the first that sets it', async () => {
    const [first, second] = [join(scratch.root, 'merge-first'), join(scratch.root, 'merge-second')];
    mkdirSync(first);
    mkdirSync(second);
    copyFileSync(nodeA.certPath, join(first, 'client.pem'));
    copyFileSync(nodeA.keyPath, join(first, 'client.key'));
    copyFileSync(server.caPath, join(second, 'ca.pem'));
    writeKubeconfigFile(join(first, 'config'), {
      contexts: [{ name: 'real', context: { cluster: 'real', user: 'node' } }],
      users: [{ name: 'node', user: { 'client-certificate': 'client.pem', 'client-key': 'client.key' } }],
    });
    writeKubeconfigFile(join(second, 'config'), {
      'current-context': 'real',
      clusters: [{ name: 'real', cluster: { server: server.origin, 'certificate-authority': 'ca.pem' } }],
      contexts: [{ name: 'real', context: { cluster: 'real', user: 'other' } }],
      users: [{ name: 'node', user: { 'client-certificate': nodeB.certPath, 'client-key': nodeB.keyPath } }],
    });
    const env = { KUBECONFIG: [join(scratch.root, 'absent'), join(first, 'config'), join(second, 'config')].join(':') };
    const client = await KubeClient.connect(null, { env });
    expect(client.server).toBe(server.origin);
    expect(await client.authenticatedUser()).toBe('system:node:node-a');
  });
});

describe('machineSelector operations, on a real API server', () => {
  it('are delivered while the server selects on spec.machineRef, and no other machine is listed', async () => {
    await create('sel-by-ref', { machineRef: 'node-a' });
    await create('sel-by-selector', { machineSelector: { matchLabels: { pool: 'flex' } } });
    await create('sel-other-pool', { machineSelector: { matchLabels: { pool: 'gpu' } } });
    await create('sel-other-machine', { machineRef: 'node-b' });
    const { client, selectors } = recording(await KubeClient.connect(nodeA.kubeconfigPath));
    const stop = new AbortController();
    try {
      const stream = storeOf(client).watch(stop.signal)[Symbol.asyncIterator]();
      const listed = await collect(stream, ['sel-by-ref', 'sel-by-selector']);
      await create('sel-watched', {
        machineSelector: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['flex'] }] },
      });
      const watched = await collect(stream, ['sel-watched']);
      expect([...listed, ...watched]).toEqual(expect.arrayContaining(['sel-by-ref', 'sel-by-selector', 'sel-watched']));
      expect([...listed, ...watched]).not.toEqual(expect.arrayContaining(['sel-other-pool']));
      expect([...listed, ...watched]).not.toEqual(expect.arrayContaining(['sel-other-machine']));
    } finally {
      stop.abort();
    }
    expect(selectors.length).toBeGreaterThanOrEqual(4);
    expect(new Set(selectors)).toEqual(new Set(['spec.machineRef=node-a', 'spec.machineRef=']));
  });
});

describe('status conditions, on a real API server', () => {
  it('keep lastTransitionTime while the Completed status stays, and other writers\u2019 conditions', async () => {
    const uid = await create('conditions', { machineRef: 'node-a' });
    const scheduled = {
      type: 'Scheduled',
      status: 'True',
      reason: 'Picked',
      lastTransitionTime: '2029-12-31T00:00:00Z',
    };
    const seeded = await server.request(server.admin, 'PATCH', `${OPS}/conditions/status`, {
      body: { status: { conditions: [scheduled] } },
      contentType: 'application/merge-patch+json',
    });
    expect(seeded.status, seeded.text).toBe(200);
    let nowMs = Date.parse('2030-01-01T00:00:00Z');
    // Only the wall clock is set by hand: it stamps the conditions' lastTransitionTime.
    const clock: Clock = Object.assign(new SystemClock(), { nowMs: () => nowMs });
    const store = storeOf(await KubeClient.connect(nodeA.kubeconfigPath), clock);
    expect(await store.markInProgress({ name: 'conditions', uid }, 'working')).toEqual({ kind: 'written' });
    nowMs += 60_000;
    const failed = { phase: 'Failed', reason: 'ExecutionFailed', message: 'no' } as const;
    expect(await store.publish({ name: 'conditions', uid }, failed)).toEqual({ kind: 'written' });
    const stored = (await server.request(server.admin, 'GET', `${OPS}/conditions`)).json as {
      status: { phase: string; conditions: Record<string, unknown>[] };
    };
    expect(stored.status.phase).toBe('Failed');
    expect(stored.status.conditions).toEqual([
      scheduled,
      expect.objectContaining({ type: 'Completed', status: 'False', lastTransitionTime: '2030-01-01T00:00:00.000Z' }),
    ]);
  });
});

describe('a server without the selectable field, on a real API server', () => {
  it('is detected by its 400, and machineRef and machineSelector operations are filtered here', async () => {
    const crd = load(readFileSync(CRD, 'utf8')) as { spec: { versions: Record<string, unknown>[] } };
    for (const version of crd.spec.versions) delete version['selectableFields'];
    const without = join(scratch.root, 'crd-without-selectable-fields.yaml');
    writeFileSync(without, dump(crd));
    const applied = await server.kubectl(server.admin, ['apply', '-f', without]);
    expect(applied.status, applied.stderr).toBe(0);
    const selected = `${OPS}?fieldSelector=${encodeURIComponent('spec.machineRef=node-a')}`;
    expect(await waitFor(async () => (await server.request(nodeA, 'GET', selected)).status === 400, 30_000, 250)).toBe(
      true,
    );
    await create('plain-by-ref', { machineRef: 'node-a' });
    await create('plain-by-selector', { machineSelector: { matchLabels: { pool: 'flex' } } });
    await create('plain-other', { machineRef: 'node-b' });
    const { client, selectors } = recording(await KubeClient.connect(nodeA.kubeconfigPath));
    const stop = new AbortController();
    try {
      const stream = storeOf(client).watch(stop.signal)[Symbol.asyncIterator]();
      const seen = await collect(stream, ['plain-by-ref', 'plain-by-selector']);
      expect(seen).toEqual(expect.arrayContaining(['plain-by-ref', 'plain-by-selector']));
      expect(seen).not.toContain('plain-other');
    } finally {
      stop.abort();
    }
    expect(selectors).toContain(undefined);
  });
});
