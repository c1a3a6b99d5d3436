/**
 * Credentials that rotate, against a real kube-apiserver (test/support/kube/real-apiserver.ts):
 * bound service-account tokens in a kubeconfig token file and in the in-cluster token file,
 * client certificate files replaced by a pair of another identity (kubelet-style too), and a
 * real exec credential plugin. Who the server authenticates is read back with a
 * SelfSubjectReview. Credentials that stay refused end the daemon with E_CLUSTER.
 */
import { copyFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, type ConnectOptions } from '../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { exitCodeFor } from '../../src/domain/common/error-codes.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import { ExecPlugin } from '../support/kube/exec-plugin.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../support/kube/kubeconfig-builder.js';
import {
  createServiceAccount,
  revokeServiceAccount,
  serviceAccountToken,
} from '../support/kube/real-apiserver-accounts.js';
import { RealApiServer, type KubeIdentity } from '../support/kube/real-apiserver.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { makeScratch } from '../support/real-tree.js';
import { waitFor } from '../support/wait-for.js';
import { ManagedWorld, SIDECAR_CONFIG } from '../sim/managed-world.js';

const REPO = resolve(import.meta.dirname, '../..');
const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
const CANARY = 'CANARY-plugin-stderr-4e1a';
const MACHINE = 'node-a';

let server: RealApiServer;
let scratch: ReturnType<typeof makeScratch>;
let nodeA: KubeIdentity;
let nodeB: KubeIdentity;
let accounts = 0;

beforeAll(async () => {
  server = await RealApiServer.start();
  scratch = makeScratch('kube-real-credentials-');
  const applied = await server.kubectl(server.admin, [
    'apply',
    '-f',
    join(REPO, 'deploy/machineoperation-crd.yaml'),
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
}, 240_000);

afterAll(async () => {
  await server?.stop();
  scratch?.cleanup();
}, 30_000);

/** A fresh service account (its own name per test) and a token of it. */
async function account(): Promise<{ readonly name: string; readonly user: string; readonly token: string }> {
  const identity = await createServiceAccount(server, `rotating-${++accounts}`);
  return { ...identity, token: await serviceAccountToken(server, identity.name) };
}

/** Replaced as a rotating agent replaces a file: written beside it, renamed over it. */
function replace(path: string, content: string | Buffer): void {
  writeFileSync(`${path}.new`, content, { mode: 0o600 });
  renameSync(`${path}.new`, path);
}

function dir(name: string): string {
  const path = join(scratch.root, name);
  mkdirSync(path, { recursive: true });
  return path;
}

const cluster = () => ({ server: server.origin, 'certificate-authority': server.caPath });
const createOperation = async (name: string) => {
  const spec = { machineRef: MACHINE, operationKind: 'AgentUpgrade', parameters: { downloadURL: 'https://x/a.tgz' } };
  const body = { apiVersion: 'unbounded-cloud.io/v1alpha3', kind: 'MachineOperation', metadata: { name }, spec };
  expect((await server.request(server.admin, 'POST', OPS, { body })).status).toBe(201);
};

/**
 * Whether the stream yields the operation `name` within `timeoutMs` (operations other tests left
 * pending are passed over).
 */
async function yields(stream: AsyncIterator<AgentUpgradeRequest>, name: string, timeoutMs = 30_000): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  for (;;) {
    const item = await Promise.race([
      stream.next(),
      new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), Math.max(0, deadlineMs - Date.now()))),
    ]);
    if (item === 'timeout' || item.done === true) return false;
    if (item.value.operation.name === name) return true;
  }
}

function storeOf(client: KubeClient, logger = new RecordingLogger()): KubernetesOperationStore {
  // Short watches, so that the stream opens new ones (with the credentials of then) while a test runs.
  return new KubernetesOperationStore({
    client,
    machineName: MACHINE,
    clock: new SystemClock(),
    logger,
    stream: { watchTimeoutMinSeconds: 1, watchTimeoutMaxSeconds: 3, retryDelayMs: 100, retryDelayMaxMs: 500 },
  });
}

describe('bound service-account tokens that rotate, on a real API server', () => {
  it.each(['a kubeconfig tokenFile', 'the in-cluster service-account token'] as const)(
    '%s is read again after a minute, and at once when the server refuses the old token',
    async (kind) => {
      const [first, second, third] = [await account(), await account(), await account()];
      const home = dir(`tokens-${accounts}`);
      const tokenPath = join(home, 'token');
      replace(tokenPath, `${first.token}\n`);
      let skewMs = 0;
      // A minute passes (the token file's age is measured on the monotonic clock).
      const options: ConnectOptions = {
        clock: { nowMs: () => Date.now(), monotonicMs: () => performance.now() + skewMs },
      };
      let client: KubeClient;
      if (kind === 'a kubeconfig tokenFile') {
        const path = writeKubeconfigFile(
          join(home, 'kubeconfig'),
          kubeconfigDocument(cluster(), { tokenFile: 'token' }),
        );
        client = await KubeClient.connect(path, options);
      } else {
        copyFileSync(server.caPath, join(home, 'ca.crt'));
        const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: new URL(server.origin).port };
        client = await KubeClient.connect(null, { ...options, env, serviceAccountDir: home });
      }
      expect(await client.authenticatedUser()).toBe(first.user);
      const stop = new AbortController();
      try {
        const stream = storeOf(client).watch(stop.signal)[Symbol.asyncIterator]();
        await createOperation(`before-${accounts}`);
        expect(await yields(stream, `before-${accounts}`)).toBe(true);

        // Rotated while the old token still works: used once what was read is a minute old.
        replace(tokenPath, `${second.token}\n`);
        expect(await client.authenticatedUser()).toBe(first.user);
        skewMs = 60_000;
        expect(await client.authenticatedUser()).toBe(second.user);

        // Rotated and the old token revoked: the first refusal makes the client read it again.
        replace(tokenPath, `${third.token}\n`);
        await revokeServiceAccount(server, second.name, second.token);
        expect(await client.authenticatedUser()).toBe(third.user);
        // The stream, whose watches kept reconnecting meanwhile, still delivers.
        await createOperation(`after-${accounts}`);
        expect(await yields(stream, `after-${accounts}`)).toBe(true);
      } finally {
        stop.abort();
      }
    },
    120_000,
  );
});

describe('client certificate files that rotate, on a real API server', () => {
  it('a replaced certificate and key are used by the next request: the identity changes', async () => {
    const home = dir('certificates');
    const [certPath, keyPath] = [join(home, 'client.pem'), join(home, 'client.key')];
    replace(certPath, readFileSync(nodeA.certPath));
    replace(keyPath, readFileSync(nodeA.keyPath));
    const kubeconfig = kubeconfigDocument(cluster(), { 'client-certificate': certPath, 'client-key': keyPath });
    const client = await KubeClient.connect(writeKubeconfigFile(join(home, 'kubeconfig'), kubeconfig));
    expect(await client.authenticatedUser()).toBe('system:node:node-a');
    expect((await client.list({ limit: 1 })).items).toBeDefined();
    replace(keyPath, readFileSync(nodeB.keyPath));
    // Half-way through the rotation the pair that worked is kept.
    expect(await client.authenticatedUser()).toBe('system:node:node-a');
    replace(certPath, readFileSync(nodeB.certPath));
    expect(await client.authenticatedUser()).toBe('system:node:node-b');
  });

  it('a kubelet-style kubelet-client-current.pem symlink moved to a new pair changes the identity', async () => {
    const home = dir('kubelet');
    const pair = (identity: KubeIdentity, name: string) => {
      const path = join(home, name);
      writeFileSync(path, Buffer.concat([readFileSync(identity.certPath), readFileSync(identity.keyPath)]), {
        mode: 0o600,
      });
      return path;
    };
    const current = join(home, 'kubelet-client-current.pem');
    symlinkSync(pair(nodeA, 'kubelet-client-1.pem'), current);
    const kubeconfig = kubeconfigDocument(cluster(), { 'client-certificate': current, 'client-key': current });
    const client = await KubeClient.connect(writeKubeconfigFile(join(home, 'kubeconfig'), kubeconfig));
    expect(await client.authenticatedUser()).toBe('system:node:node-a');
    symlinkSync(pair(nodeB, 'kubelet-client-2.pem'), `${current}.new`);
    renameSync(`${current}.new`, current);
    expect(await client.authenticatedUser()).toBe('system:node:node-b');
  });
});

describe('an exec credential plugin, on a real API server', () => {
  it('is run once per credential, again when it expires and again when the server refuses it', async () => {
    const [first, second] = [await account(), await account()];
    const plugin = new ExecPlugin(dir('plugin-token')).token(first.token).ttlSeconds(4).stderr(`${CANARY}\n`);
    let skewMs = 0;
    const path = writeKubeconfigFile(
      join(plugin.stateDir, '..', 'kubeconfig'),
      kubeconfigDocument(cluster(), { exec: plugin.stanza() }),
    );
    const logger = new RecordingLogger();
    const client = await KubeClient.connect(path, {
      clock: { nowMs: () => Date.now() + skewMs, monotonicMs: () => performance.now() },
    });
    expect(await client.authenticatedUser()).toBe(first.user);
    await Promise.all([client.authenticatedUser(), client.list({ limit: 1 }), client.list({ limit: 1 })]);
    expect(plugin.calls()).toBe(1);

    // Past its expirationTimestamp the plugin runs again; this answer has no expiry.
    plugin.ttlSeconds(null);
    skewMs = 5_000;
    expect(await client.authenticatedUser()).toBe(first.user);
    expect(plugin.calls()).toBe(2);

    plugin.token(second.token);
    await revokeServiceAccount(server, first.name, first.token);
    expect(await client.authenticatedUser()).toBe(second.user);
    expect(await client.authenticatedUser()).toBe(second.user);
    expect(plugin.calls()).toBe(3);

    const stop = new AbortController();
    try {
      const stream = storeOf(client, logger).watch(stop.signal)[Symbol.asyncIterator]();
      await createOperation('through-the-plugin');
      expect(await yields(stream, 'through-the-plugin')).toBe(true);
    } finally {
      stop.abort();
    }
    expect(JSON.stringify(logger.lines)).not.toContain(CANARY);
  }, 120_000);

  it('that prints a client certificate authenticates as its subject', async () => {
    const plugin = new ExecPlugin(dir('plugin-certificate')).certificate(nodeB.certPath, nodeB.keyPath);
    const path = writeKubeconfigFile(
      join(plugin.stateDir, '..', 'kubeconfig'),
      kubeconfigDocument(cluster(), { exec: plugin.stanza() }),
    );
    const client = await KubeClient.connect(path);
    expect(await client.authenticatedUser()).toBe('system:node:node-b');
    expect(plugin.calls()).toBe(1);
  });
});

describe('credentials that stay refused, on a real API server', () => {
  it('end the daemon with E_CLUSTER (exit 1), one error logged, after a bounded number of refusals', async () => {
    const doomed = await account();
    const home = dir('refused');
    replace(join(home, 'token'), doomed.token);
    const client = await KubeClient.connect(
      writeKubeconfigFile(join(home, 'kubeconfig'), kubeconfigDocument(cluster(), { tokenFile: 'token' })),
    );
    await revokeServiceAccount(server, doomed.name, doomed.token);
    const world = new ManagedWorld();
    await world.services.restart();
    const store = new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: new SystemClock(),
      logger: world.logger.child({ component: 'machine-operations' }),
      stream: { retryDelayMs: 50, retryDelayMaxMs: 200, unauthorized: { attempts: 4, windowMs: 1_000 } },
    });
    const stop = new AbortController();
    const startedMs = Date.now();
    const exit = await Promise.race([
      world.process(SIDECAR_CONFIG, { operationStore: store }).daemon(stop.signal, { selfExecutable: null }),
      new Promise<'running'>((done) => setTimeout(() => done('running'), 30_000)),
    ]);
    stop.abort();
    expect(exit).toMatchObject({ ok: false, failure: { code: 'E_CLUSTER_AUTH' } });
    expect(exitCodeFor('E_CLUSTER_AUTH')).toBe(1);
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(1_000);
    expect(world.logger.lines.filter((line) => line.level === 'error')).toHaveLength(1);
  }, 60_000);
});
