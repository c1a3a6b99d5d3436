import { copyFileSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CredentialError } from '../../../src/adapters/common/kubernetes/credential-error.js';
import { Credentials, TOKEN_FILE_MAX_AGE_MS } from '../../../src/adapters/common/kubernetes/credentials.js';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import { KubernetesOperationStore } from '../../../src/adapters/node/kubernetes/kubernetes-operation-store.js';
import { UnauthorizedStreak } from '../../../src/adapters/common/kubernetes/unauthorized-streak.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import { startAuthGate, type AuthGate } from '../../support/kube/auth-gate.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../support/kube/kubeconfig-builder.js';
import { machineOperation } from '../../support/kube/machine-operations.js';
import { createPki, issueClientCertificate, type ClientCertificate } from '../../support/kube/real-apiserver-pki.js';
import { makeScratch } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';

const MACHINE = 'node-1';

describe('token files that rotate', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let api: FakeApiServer;
  let gate: AuthGate;
  let nowMs: number;
  const tokenPath = () => join(scratch.root, 'token');
  /** Replaced as a rotating agent replaces it: a new file renamed over the old one. */
  const rotate = (token: string) => {
    writeFileSync(`${tokenPath()}.new`, `${token}\n`);
    renameSync(`${tokenPath()}.new`, tokenPath());
  };
  const connect = (user: Record<string, unknown> = { tokenFile: 'token' }) =>
    KubeClient.connect(
      writeKubeconfigFile(join(scratch.root, 'kubeconfig'), kubeconfigDocument({ server: gate.origin }, user)),
      { clock: { nowMs: () => nowMs, monotonicMs: () => nowMs } },
    );
  const list = (client: KubeClient) => client.list({ limit: 10 });

  beforeEach(async () => {
    scratch = makeScratch();
    nowMs = Date.now();
    api = await startFakeApiServer();
    gate = await startAuthGate(api.origin, ['one', 'two']);
    rotate('one');
  });
  afterEach(async () => {
    await gate.close();
    await api.close();
    scratch.cleanup();
  });

  it('are read again once what was read is a minute old, not before', async () => {
    const client = await connect();
    await list(client);
    rotate('two');
    await list(client);
    nowMs += TOKEN_FILE_MAX_AGE_MS - 1;
    await list(client);
    expect(gate.tokens).toEqual(['one', 'one', 'one']);
    nowMs += 1;
    await list(client);
    expect(gate.tokens.at(-1)).toBe('two');
    expect(TOKEN_FILE_MAX_AGE_MS).toBeLessThanOrEqual(60_000);
  });

  it('are read again at once after a 401, and the request is sent once more with the new token', async () => {
    const client = await connect();
    await list(client);
    rotate('two');
    gate.accept('two');
    expect((await list(client)).items).toEqual([]);
    expect(gate.tokens).toEqual(['one', 'one', 'two']);
    expect(gate.refused).toBe(1);
  });

  it('never send a refused token a second time when re-reading changed nothing', async () => {
    const client = await connect();
    gate.accept();
    await expect(list(client)).rejects.toMatchObject({ constructor: ClusterError, status: 401, code: 'refused' });
    expect(gate.tokens).toEqual(['one']);
    const inline = await connect({ token: 'one' });
    await expect(list(inline)).rejects.toMatchObject({ status: 401 });
    expect(gate.tokens).toEqual(['one', 'one']);
  });

  it('keep the last token read while the file is briefly missing, and the inline token before any', async () => {
    const client = await connect();
    rmSync(tokenPath());
    nowMs += TOKEN_FILE_MAX_AGE_MS;
    await list(client);
    expect(gate.tokens).toEqual(['one']);
    const fallback = await connect({ tokenFile: 'token', token: 'two' });
    await list(fallback);
    expect(gate.tokens.at(-1)).toBe('two');
    await expect(connect({ tokenFile: 'token' })).rejects.toBeInstanceOf(CredentialError);
  });
});

describe('client certificate files that rotate', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let first: ClientCertificate;
  let second: ClientCertificate;
  beforeAll(async () => {
    scratch = makeScratch();
    await createPki(scratch.root);
    [first, second] = await Promise.all([
      issueClientCertificate(scratch.root, 'first', 'first', []),
      issueClientCertificate(scratch.root, 'second', 'second', []),
    ]);
  }, 60_000);
  afterAll(() => scratch.cleanup());

  const place = (name: string, from: string) => {
    copyFileSync(from, join(scratch.root, `${name}.new`));
    renameSync(join(scratch.root, `${name}.new`), join(scratch.root, name));
  };

  it('are read again when they change, and a half-rotated pair keeps the pair that worked', async () => {
    place('client.pem', first.certPath);
    place('client.key', first.keyPath);
    const credentials = new Credentials(
      { certFile: join(scratch.root, 'client.pem'), keyFile: join(scratch.root, 'client.key') },
      null,
      Date.now,
    );
    const initial = await credentials.current();
    expect(initial.cert?.toString()).toBe(readFileSync(first.certPath, 'utf8'));
    // The same bytes written again: a new file, the same pair, the same connections.
    place('client.pem', first.certPath);
    expect(await credentials.current()).toBe(initial);
    // The certificate is replaced before its key: the old pair stays until the key follows.
    place('client.pem', second.certPath);
    expect((await credentials.current()).tlsId).toBe(initial.tlsId);
    place('client.key', second.keyPath);
    const rotated = await credentials.current();
    expect(rotated.tlsId).not.toBe(initial.tlsId);
    expect(rotated.cert?.toString()).toBe(readFileSync(second.certPath, 'utf8'));
    expect(rotated.version).toBe(initial.version + 1);
  });

  it('follow a rotated symlink to one file holding certificate and key, as the kubelet writes it', async () => {
    const combined = (name: string, pair: ClientCertificate) => {
      const path = join(scratch.root, name);
      writeFileSync(path, readFileSync(pair.certPath, 'utf8') + readFileSync(pair.keyPath, 'utf8'));
      return path;
    };
    const current = join(scratch.root, 'kubelet-client-current.pem');
    symlinkSync(combined('kubelet-client-1.pem', first), current);
    const credentials = new Credentials({ certFile: current, keyFile: current }, null, Date.now);
    const before = await credentials.current();
    symlinkSync(combined('kubelet-client-2.pem', second), `${current}.new`);
    renameSync(`${current}.new`, current);
    expect((await credentials.current()).tlsId).not.toBe(before.tlsId);
  });

  it('refuse a pair whose key does not match before any pair worked', async () => {
    const credentials = new Credentials({ certFile: first.certPath, keyFile: second.keyPath }, null, Date.now);
    await expect(credentials.current()).rejects.toBeInstanceOf(CredentialError);
  });
});

describe('credentials that stay invalid', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let api: FakeApiServer;
  let gate: AuthGate;
  let stop: AbortController;
  beforeEach(async () => {
    scratch = makeScratch();
    stop = new AbortController();
    api = await startFakeApiServer({ bookmarkIntervalMs: 200 });
    gate = await startAuthGate(api.origin, ['valid']);
  });
  afterEach(async () => {
    stop.abort();
    await gate.close();
    await api.close();
    scratch.cleanup();
  });

  it('end the watch with a ClusterError `unauthorized` after enough refusals over enough time', async () => {
    writeFileSync(join(scratch.root, 'token'), 'valid');
    const client = await KubeClient.connect(
      writeKubeconfigFile(
        join(scratch.root, 'kubeconfig'),
        kubeconfigDocument({ server: gate.origin }, { tokenFile: 'token' }),
      ),
    );
    api.create(machineOperation('before', MACHINE));
    const store = new KubernetesOperationStore({
      client,
      machineName: MACHINE,
      clock: new SystemClock(),
      logger: new RecordingLogger(),
      stream: {
        retryDelayMs: 20,
        retryDelayMaxMs: 80,
        idleTimeoutMs: 2_000,
        watchTimeoutMinSeconds: 1,
        watchTimeoutMaxSeconds: 2,
        unauthorized: { attempts: 4, windowMs: 600 },
      },
    });
    const stream = store.watch(stop.signal)[Symbol.asyncIterator]();
    expect((await stream.next()).value?.operation.name).toBe('before');
    // The token is revoked and never replaced: every re-read finds the same refused token.
    gate.accept();
    const refusedFromMs = Date.now();
    api.dropWatches();
    const failure = await Promise.race([
      stream.next().then(
        () => null,
        (error: unknown) => error,
      ),
      new Promise((done) => setTimeout(() => done('still running'), 15_000)),
    ]);
    expect(failure).toMatchObject({ constructor: ClusterError, code: 'unauthorized', status: 401 });
    expect(Date.now() - refusedFromMs).toBeGreaterThanOrEqual(600);
    expect(gate.refused).toBeGreaterThanOrEqual(4);
  });

  it('count only authentication failures, and reset on any request that worked', () => {
    let nowMs = 0;
    const clock: Clock = { nowMs: () => nowMs, monotonicMs: () => nowMs, sleep: async () => undefined };
    const streak = new UnauthorizedStreak({ attempts: 3, windowMs: 1_000 }, clock);
    const refused = new ClusterError(401, 'GET /x was answered 401');
    for (let attempt = 0; attempt < 5; attempt += 1) streak.record(refused);
    expect(() => streak.check(refused)).not.toThrow();
    nowMs = 1_000;
    expect(() => streak.check(refused)).toThrow(expect.objectContaining({ code: 'unauthorized', status: 401 }));
    streak.record(null);
    expect(() => streak.check(refused)).not.toThrow();
    // Unreachable and forbidden say nothing about the credentials; having none to send does.
    streak.record(new ClusterError(null, 'unreachable'));
    streak.record(new ClusterError(403, 'forbidden'));
    streak.record(new CredentialError('the plugin failed'));
    streak.record(refused);
    nowMs = 1_500;
    expect(() => streak.check(refused)).not.toThrow();
    streak.record(refused);
    nowMs = 2_000;
    expect(() => streak.check(refused)).toThrow(expect.objectContaining({ code: 'unauthorized' }));
  });
});
