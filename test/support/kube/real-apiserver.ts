// A real kube-apiserver (with embedded etcd) on 127.0.0.1 for tests, built from Go modules by
// scripts/build-kube-apiserver.sh: authentication by client certificates from a harness-made
// client CA, authorization by the Node and RBAC authorizers, and the NodeRestriction admission
// plugin, so what the shipped CRD, RBAC and policies allow is what a cluster allows. One server
// per test file (start it in beforeAll, stop it in afterAll); it lives in a temp dir that stop()
// removes.

import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dump } from 'js-yaml';
import { waitFor } from '../wait-for.js';
import { kubeRequest, type KubeIdentity, type KubeRequestOptions, type KubeResponse } from './real-apiserver-client.js';
import { createPki, issueClientCertificate, type ApiServerPki } from './real-apiserver-pki.js';
import { freeLoopbackPort, ManagedProcess } from './real-apiserver-processes.js';

export type { KubeIdentity, KubeRequestOptions, KubeResponse } from './real-apiserver-client.js';

const REPO = resolve(import.meta.dirname, '../../..');
const BUILD_SCRIPT = 'scripts/build-kube-apiserver.sh';

export interface RealApiServerOptions {
  /** Bound on etcd plus kube-apiserver becoming ready. Default 120 s: 2 shared cores are slow. */
  readonly startTimeoutMs?: number;
  /** More kube-apiserver flags, after the harness's own. */
  readonly extraArgs?: readonly string[];
  /** Where the server's temp dir is made. Default the OS temp dir. */
  readonly parentDir?: string;
}

export interface CommandResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface Binaries {
  readonly dir: string;
  readonly kubeApiserver: string;
  readonly etcd: string;
  readonly kubectl: string;
}

/** The built binaries, or an error that says how to build them (never a silent skip). */
export function realApiServerBinaries(): Binaries {
  const check = spawnSync('bash', [join(REPO, BUILD_SCRIPT), '--check'], { encoding: 'utf8', timeout: 30_000 });
  const dir = check.stdout.trim();
  if (check.status !== 0 || dir === '') {
    throw new Error(
      `The real kube-apiserver, etcd and kubectl are not built (or are stale) in ${dir || 'the cache'}. ` +
        `Build them with \`${BUILD_SCRIPT}\` (docs/testing.md#the-real-kubernetes-api-server); .ci/run does it. ` +
        `${check.stderr}`.trim(),
    );
  }
  return { dir, kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd'), kubectl: join(dir, 'kubectl') };
}

function apiServerArgs(pki: ApiServerPki, securePort: number, etcdUrl: string): string[] {
  return [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${securePort}`,
    `--tls-cert-file=${pki.servingCertPath}`,
    `--tls-private-key-file=${pki.servingKeyPath}`,
    `--client-ca-file=${pki.clientCaPath}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--anonymous-auth=false',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${pki.serviceAccountPublicKeyPath}`,
    `--service-account-signing-key-file=${pki.serviceAccountKeyPath}`,
    // Addresses for Service objects only: nothing here dials them (no kube-proxy, no webhooks).
    '--service-cluster-ip-range=10.0.0.0/24',
    // The default reconciler publishes --advertise-address in the `kubernetes` Endpoints, which
    // refuses a loopback address and logs an error every 10 s; no test needs that object.
    '--endpoint-reconciler-type=none',
    '--profiling=false',
  ];
}

async function startEtcd(binaries: Binaries, dir: string, deadlineMs: number): Promise<[ManagedProcess, string]> {
  const [clientPort, peerPort] = await Promise.all([freeLoopbackPort(), freeLoopbackPort()]);
  const etcd = ManagedProcess.start(
    'etcd',
    binaries.etcd,
    ['-data-dir', join(dir, 'etcd'), '-client-port', String(clientPort), '-peer-port', String(peerPort)],
    join(dir, 'etcd.log'),
  );
  const url = `http://127.0.0.1:${clientPort}`;
  const healthy = async (): Promise<boolean> => {
    if (etcd.exited) return true;
    const answer = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
    return answer?.ok === true && ((await answer.json()) as { health?: string }).health === 'true';
  };
  const ready = await waitFor(healthy, Math.max(0, deadlineMs - Date.now()), 100);
  if (!ready || etcd.exited) {
    await etcd.stop();
    throw new Error(`etcd did not become healthy (${etcd.exited ? 'it exited' : 'timed out'}):\n${etcd.logTail()}`);
  }
  return [etcd, url];
}

/** A real kube-apiserver with embedded etcd, on loopback, in its own temp dir. */
export class RealApiServer {
  private readonly processes: ManagedProcess[] = [];
  private issued = 0;
  /** `https://127.0.0.1:<port>`. */
  origin = '';
  /** The cluster admin (`O=system:masters`), which RBAC never restricts. */
  admin!: KubeIdentity;
  /** How long etcd plus the API server took to become ready, in milliseconds. */
  startupMs = 0;
  /** etcd's client URL (`http://127.0.0.1:<port>`), for tests that act on storage itself (e.g. compaction). */
  etcdUrl = '';

  private constructor(
    readonly dir: string,
    readonly binaries: Binaries,
    private readonly pki: ApiServerPki,
  ) {}

  /** The PIDs of etcd and the API server while they run (teardown tests check they are gone). */
  get pids(): number[] {
    return this.processes.flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  /** The CA file that verifies the server's certificate. */
  get caPath(): string {
    return this.pki.servingCaPath;
  }

  /** Starts etcd and the API server and waits (bounded) for /readyz; cleans up after itself on failure. */
  static async start(options: RealApiServerOptions = {}): Promise<RealApiServer> {
    const binaries = realApiServerBinaries();
    const startedMs = Date.now();
    const deadlineMs = startedMs + (options.startTimeoutMs ?? 120_000);
    const dir = await mkdtemp(join(options.parentDir ?? tmpdir(), 'kube-real-'));
    await mkdir(join(dir, 'pki'));
    const server = new RealApiServer(dir, binaries, await createPki(join(dir, 'pki')));
    try {
      const [etcd, etcdUrl] = await startEtcd(binaries, dir, deadlineMs);
      server.processes.push(etcd);
      server.etcdUrl = etcdUrl;
      await server.startApiServer(etcdUrl, options.extraArgs ?? [], deadlineMs);
      server.startupMs = Date.now() - startedMs;
      return server;
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  private async startApiServer(etcdUrl: string, extraArgs: readonly string[], deadlineMs: number): Promise<void> {
    const securePort = await freeLoopbackPort();
    this.origin = `https://127.0.0.1:${securePort}`;
    this.admin = await this.identity('admin', 'agent-upgrade-test-admin', ['system:masters']);
    const args = [...apiServerArgs(this.pki, securePort, etcdUrl), ...extraArgs];
    const apiServer = ManagedProcess.start(
      'kube-apiserver',
      this.binaries.kubeApiserver,
      args,
      join(this.dir, 'kube-apiserver.log'),
    );
    this.processes.push(apiServer);
    const ready = async (): Promise<boolean> => {
      if (apiServer.exited) return true;
      const answer = await this.request(this.admin, 'GET', '/readyz', { timeoutMs: 2_000 }).catch(() => undefined);
      return answer?.status === 200;
    };
    const answered = await waitFor(ready, Math.max(0, deadlineMs - Date.now()), 250);
    if (!answered || apiServer.exited) {
      const why = apiServer.exited ? 'it exited' : 'timed out';
      const verbose = await this.request(this.admin, 'GET', '/readyz?verbose', { timeoutMs: 2_000 }).catch(
        () => undefined,
      );
      throw new Error(`kube-apiserver did not become ready (${why}):\n${verbose?.text ?? ''}\n${apiServer.logTail()}`);
    }
  }

  /** A node identity as the kubelet has it: `CN=system:node:<name>, O=system:nodes`. */
  node(name: string): Promise<KubeIdentity> {
    return this.identity(`node-${name}`, `system:node:${name}`, ['system:nodes']);
  }

  /** Issues a client certificate for `user` in `groups` and writes a kubeconfig for it. */
  async identity(label: string, user: string, groups: readonly string[]): Promise<KubeIdentity> {
    const fileName = `${label.replace(/[^\w.-]/g, '_')}-${++this.issued}`;
    const cert = await issueClientCertificate(join(this.dir, 'pki'), fileName, user, groups);
    const kubeconfigPath = join(this.dir, `${fileName}.kubeconfig`);
    await writeFile(kubeconfigPath, dump(this.kubeconfig(user, cert.certPath, cert.keyPath)), { mode: 0o600 });
    return { user, groups, ...cert, kubeconfigPath };
  }

  private kubeconfig(user: string, certPath: string, keyPath: string): object {
    return {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'real', cluster: { server: this.origin, 'certificate-authority': this.caPath } }],
      users: [{ name: user, user: { 'client-certificate': certPath, 'client-key': keyPath } }],
      contexts: [{ name: 'real', context: { cluster: 'real', user } }],
      'current-context': 'real',
    };
  }

  /** One HTTPS request as `identity`, or with no client certificate. */
  request(
    identity: KubeIdentity | 'anonymous',
    method: string,
    path: string,
    options?: KubeRequestOptions,
  ): Promise<KubeResponse> {
    return kubeRequest(this.origin, this.caPath, identity, method, path, options);
  }

  /** Runs the built kubectl as `identity` (bounded); resolves with its exit status, never throws on it. */
  kubectl(identity: KubeIdentity, args: readonly string[], timeoutMs = 60_000): Promise<CommandResult> {
    // HOME in the temp dir: kubectl's discovery cache and kuberc stay out of the real home.
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: this.dir, KUBECONFIG: identity.kubeconfigPath };
    return new Promise((done) => {
      execFile(
        this.binaries.kubectl,
        args,
        { env, timeout: timeoutMs, maxBuffer: 16 << 20 },
        (error, stdout, stderr) => {
          const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
          done({ status, stdout, stderr });
        },
      );
    });
  }

  /** Stops the API server, then etcd, and removes the temp dir (logs and keys with it). */
  async stop(): Promise<void> {
    for (const child of [...this.processes].reverse()) await child.stop();
    this.processes.length = 0;
    await rm(this.dir, { recursive: true, force: true });
  }
}
