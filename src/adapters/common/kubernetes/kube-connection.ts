import type { Clock } from '../../../ports/common/clock.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import { SystemClock } from '../runtime/system-clock.js';
import { NodeProcessRunner } from '../runtime/node-process-runner.js';
import { Credentials } from './credentials.js';
import { EXEC_TIMEOUT_MS, ExecCredentialSource } from './exec-credential.js';
import { KubeHttp } from './kube-http.js';
import { loadClusterConfig, type ClusterConfig } from './kubeconfig.js';
import { proxyFor } from './proxy.js';

export interface ConnectOptions {
  /** Default `process.env`: KUBECONFIG, the in-cluster variables, the proxy variables, the plugin's environment. */
  readonly env?: NodeJS.ProcessEnv;
  readonly serviceAccountDir?: string;
  /** The kubeconfig context to use instead of its current one (kubectl's `--context`). */
  readonly context?: string;
  /** Runs exec credential plugins; default a NodeProcessRunner. */
  readonly runner?: ProcessRunner;
  /**
   * What credentials are judged by: a plugin's expiry against the wall clock, a token file's age
   * on the monotonic one. Default the system clock.
   */
  readonly clock?: Pick<Clock, 'nowMs' | 'monotonicMs'>;
  readonly execTimeoutMs?: number;
  /** Requests under way at once at most; default SOCKETS_MAX (a daemon's few). */
  readonly sockets?: number;
}

/**
 * The one way to reach an API server: the kubeconfig chain, the credentials (token files, client
 * certificates, exec plugins) read once up front so a bad kubeconfig fails here, the TLS trust
 * and the proxy rules. Every client of the cluster (operations, rollouts) is built on it.
 */
export async function connectKubeHttp(kubeconfigPath: string | null, options: ConnectOptions = {}): Promise<KubeHttp> {
  const env = options.env ?? process.env;
  const config = await loadClusterConfig(kubeconfigPath, env, options.serviceAccountDir, options.context ?? null);
  const proxy = proxyFor(new URL(config.server), config.proxyUrl, env);
  const clock = options.clock ?? new SystemClock();
  const exec =
    config.user.exec === undefined
      ? null
      : new ExecCredentialSource(config.user.exec, {
          runner: options.runner ?? new NodeProcessRunner(),
          nowMs: () => clock.nowMs(),
          timeoutMs: options.execTimeoutMs ?? EXEC_TIMEOUT_MS,
          env,
          cluster: config.user.exec.provideClusterInfo ? clusterInfo(config) : null,
        });
  const credentials = new Credentials(config.user, exec, () => clock.monotonicMs());
  await credentials.current();
  return new KubeHttp(config, credentials, proxy, options.sockets);
}

/** `spec.cluster` of KUBERNETES_EXEC_INFO for a plugin that asks for it (`provideClusterInfo`). */
function clusterInfo(config: ClusterConfig): Record<string, unknown> {
  return {
    server: config.server,
    ...(config.tlsServerName === undefined ? {} : { 'tls-server-name': config.tlsServerName }),
    'insecure-skip-tls-verify': !config.rejectUnauthorized,
    ...(config.ca === undefined ? {} : { 'certificate-authority-data': config.ca.toString('base64') }),
    ...(config.proxyUrl === undefined ? {} : { 'proxy-url': config.proxyUrl }),
  };
}
