import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CredentialError } from '../../../src/adapters/common/kubernetes/credential-error.js';
import { Credentials } from '../../../src/adapters/common/kubernetes/credentials.js';
import { ExecCredentialSource } from '../../../src/adapters/common/kubernetes/exec-credential.js';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { loadClusterConfig } from '../../../src/adapters/common/kubernetes/kubeconfig.js';
import { NodeProcessRunner } from '../../../src/adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { startAuthGate, type AuthGate } from '../../support/kube/auth-gate.js';
import { ExecPlugin } from '../../support/kube/exec-plugin.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../support/kube/kubeconfig-builder.js';
import { machineOperation } from '../../support/kube/machine-operations.js';
import { createPki, issueClientCertificate } from '../../support/kube/real-apiserver-pki.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';

const CANARY = 'CANARY-exec-stderr-91c2';

describe('an exec credential plugin', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let api: FakeApiServer;
  let gate: AuthGate;
  let plugin: ExecPlugin;
  let nowMs: number;
  const kubeconfig = (exec: Record<string, unknown> = plugin.stanza()) =>
    writeKubeconfigFile(join(scratch.root, 'kubeconfig'), kubeconfigDocument({ server: gate.origin }, { exec }));
  const connect = (options: { readonly execTimeoutMs?: number } = {}) =>
    KubeClient.connect(kubeconfig(), { clock: { nowMs: () => nowMs, monotonicMs: () => nowMs }, ...options });
  const list = (client: KubeClient) => client.list({ limit: 10 });
  /** Settles `promise` within `timeoutMs`, or reports that it did not. */
  const settled = <T>(promise: Promise<T>, timeoutMs: number) =>
    Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      new Promise<'pending'>((done) => setTimeout(() => done('pending'), timeoutMs)),
    ]);

  beforeEach(async () => {
    scratch = makeScratch();
    nowMs = Date.now();
    api = await startFakeApiServer({ bookmarkIntervalMs: 200 });
    gate = await startAuthGate(api.origin, ['one', 'two']);
    plugin = new ExecPlugin(scratch.root).token('one');
  });
  afterEach(async () => {
    await gate.close();
    await api.close();
    scratch.cleanup();
  });

  it('runs once per credential: kept until its expirationTimestamp, then run again', async () => {
    plugin.ttlSeconds(30);
    const client = await connect();
    expect(plugin.calls()).toBe(1);
    await Promise.all([list(client), list(client), list(client)]);
    expect(plugin.calls()).toBe(1);
    nowMs += 31_000;
    plugin.token('two');
    await Promise.all([list(client), list(client)]);
    expect(plugin.calls()).toBe(2);
    expect(gate.tokens).toEqual(['one', 'one', 'one', 'two', 'two']);
  });

  it('keeps a credential without expiry until the server refuses it, then runs again and retries', async () => {
    const client = await connect();
    await list(client);
    nowMs += 24 * 3_600_000;
    await list(client);
    expect(plugin.calls()).toBe(1);
    plugin.token('two');
    gate.accept('two');
    await list(client);
    expect(plugin.calls()).toBe(2);
    expect(gate.tokens).toEqual(['one', 'one', 'one', 'two']);
  });

  it('is told it is not interactive, and about the cluster when it asks', async () => {
    await KubeClient.connect(kubeconfig(plugin.stanza({ provideClusterInfo: true, args: ['--x'] })));
    expect(plugin.execInfo()).toMatchObject({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false, cluster: { server: gate.origin, 'insecure-skip-tls-verify': false } },
    });
    await KubeClient.connect(kubeconfig());
    expect(plugin.execInfo()).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
  });

  it('is killed when it does not answer in time', async () => {
    plugin.sleepSeconds(20);
    const startedMs = Date.now();
    const outcome = await settled(connect({ execTimeoutMs: 300 }), 10_000);
    expect(outcome).toMatchObject({ error: { constructor: CredentialError, code: 'unavailable', status: null } });
    expect(Date.now() - startedMs).toBeLessThan(10_000);
  });

  it.each([
    ['exits non-zero', (p: ExecPlugin) => p.exitStatus(3)],
    ['prints no JSON', (p: ExecPlugin) => p.raw(`not json ${CANARY}`)],
    [
      'prints another apiVersion',
      (p: ExecPlugin) =>
        p.raw(JSON.stringify({ apiVersion: 'x/v1', kind: 'ExecCredential', status: { token: CANARY } })),
    ],
    [
      'prints no credential',
      (p: ExecPlugin) =>
        p.raw(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: {} })),
    ],
    [
      'prints an expiry that is not a time',
      (p: ExecPlugin) =>
        p.raw(
          JSON.stringify({
            apiVersion: 'client.authentication.k8s.io/v1',
            kind: 'ExecCredential',
            status: { token: CANARY, expirationTimestamp: 'tomorrow' },
          }),
        ),
    ],
  ])('that %s fails with a CredentialError that quotes none of its output', async (_case, arrange) => {
    arrange(plugin.stderr(`diagnostics with a secret: ${CANARY}\n`));
    const outcome = await settled(connect(), 10_000);
    expect(outcome).toMatchObject({ error: { constructor: CredentialError, code: 'unavailable' } });
    expect(String((outcome as { error: Error }).error.message)).not.toContain(CANARY);
  });

  it('that cannot be started names the kubeconfig install hint', async () => {
    const outcome = await settled(
      KubeClient.connect(
        kubeconfig(plugin.stanza({ command: join(scratch.root, 'absent'), installHint: 'install it' })),
      ),
      10_000,
    );
    expect(outcome).toMatchObject({ error: { constructor: CredentialError, status: null } });
  });

  it('that keeps failing ends the watch like refused credentials do', async () => {
    api.create(machineOperation('before', 'node-1'));
    const client = await connect();
    const stop = new AbortController();
    const logger = new RecordingLogger();
    const store = new KubernetesOperationStore({
      client,
      machineName: 'node-1',
      clock: new SystemClock(),
      logger,
      stream: { retryDelayMs: 20, retryDelayMaxMs: 50, unauthorized: { attempts: 3, windowMs: 200 } },
    });
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    try {
      expect((await stream.next()).value?.operation.name).toBe('before');
      // The token is refused; the plugin, run again, now fails (its secret-bearing stderr included).
      gate.accept();
      plugin.exitStatus(1).stderr(`${CANARY}\n`);
      api.dropWatches();
      const outcome = await settled(stream.next(), 15_000);
      expect(outcome).toMatchObject({ error: { constructor: ClusterError, code: 'unauthorized' } });
      expect(JSON.stringify(logger.lines)).not.toContain(CANARY);
    } finally {
      stop.abort();
    }
  });
});

describe('an exec credential plugin that prints a client certificate', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeAll(() => {
    scratch = makeScratch();
  });
  afterAll(() => scratch.cleanup());

  it('gives the request that certificate and key', async () => {
    await createPki(scratch.root);
    const pair = await issueClientCertificate(scratch.root, 'plugin-client', 'plugin-user', []);
    const plugin = new ExecPlugin(scratch.root).certificate(pair.certPath, pair.keyPath);
    const config = await loadClusterConfig(
      writeKubeconfigFile(
        join(scratch.root, 'kubeconfig'),
        kubeconfigDocument({ server: 'https://127.0.0.1:1' }, { exec: plugin.stanza() }),
      ),
    );
    const exec = config.user.exec;
    if (exec === undefined) throw new Error('no exec stanza');
    const source = new ExecCredentialSource(exec, {
      runner: new NodeProcessRunner(),
      nowMs: Date.now,
      timeoutMs: 10_000,
      env: process.env,
      cluster: null,
    });
    const state = await new Credentials(config.user, source, Date.now).current();
    expect({ cert: state.cert?.toString(), authorization: state.headers['authorization'] }).toEqual({
      cert: readFileSync(pair.certPath, 'utf8'),
      authorization: undefined,
    });
    expect(plugin.calls()).toBe(1);
  }, 60_000);
});
