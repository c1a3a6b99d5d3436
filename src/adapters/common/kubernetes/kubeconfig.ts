import { homedir } from 'node:os';
import { join } from 'node:path';
import { ClusterError } from '../../../domain/common/port-errors.js';
import { readBounded, readKubeconfigs, pathFrom, text } from './kubeconfig-files.js';
import { readUser, type UserConfig } from './kubeconfig-user.js';

export type { ExecConfig, UserConfig } from './kubeconfig-user.js';

/** Where the API server is, how it is trusted and reached, and how this client authenticates. */
export interface ClusterConfig {
  /** `https://host:port` without a trailing slash. */
  readonly server: string;
  readonly ca?: Buffer;
  readonly rejectUnauthorized: boolean;
  /** The name the server's certificate is checked against (and sent as SNI) instead of the server's host. */
  readonly tlsServerName?: string;
  /** The cluster's `proxy-url`: used for every request, whatever the environment says. */
  readonly proxyUrl?: string;
  readonly user: UserConfig;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Reads cluster access from a kubeconfig file, or by default from KUBECONFIG (every file it
 * lists, merged as kubectl merges them), the in-cluster service account, or ~/.kube/config.
 * Credentials: bearer tokens (inline or a token file), client certificates (inline or files),
 * basic auth and exec credential plugins; auth providers are refused. Files holding
 * credentials are only named here: `Credentials` reads them, and reads them again as they
 * rotate. Loaded without the full Kubernetes client, whose generated models cost ~70 MiB of RSS
 * (docs/benchmarks.md#daemon-under-load: idle RSS ≤ 100 MiB). `contextName` picks a context
 * other than the current one, as kubectl's `--context` does; a kubeconfig is then required (the
 * in-cluster account has no contexts).
 */
export async function loadClusterConfig(
  kubeconfigPath: string | null,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
  contextName: string | null = null,
): Promise<ClusterConfig> {
  if (kubeconfigPath !== null) return fromKubeconfigs([kubeconfigPath], false, contextName);
  const listed = (env['KUBECONFIG'] ?? '').split(':').filter((entry) => entry !== '');
  if (listed.length > 0) return fromKubeconfigs([...new Set(listed)], true, contextName);
  const host = env['KUBERNETES_SERVICE_HOST'];
  if (host !== undefined && host !== '' && contextName === null)
    return inCluster(host, env['KUBERNETES_SERVICE_PORT'] ?? '443', serviceAccountDir);
  return fromKubeconfigs([join(env['HOME'] ?? homedir(), '.kube', 'config')], false, contextName);
}

/** The pod's service account: its token file is re-read like any token file (it is rotated by the kubelet). */
async function inCluster(host: string, port: string, serviceAccountDir: string): Promise<ClusterConfig> {
  const ca = await readBounded(join(serviceAccountDir, 'ca.crt'));
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { server, ca, rejectUnauthorized: true, user: { tokenFile: join(serviceAccountDir, 'token') } };
}

async function fromKubeconfigs(
  paths: readonly string[],
  skipMissing: boolean,
  requestedContext: string | null,
): Promise<ClusterConfig> {
  const merged = await readKubeconfigs(paths, skipMissing);
  const where =
    merged.files.length === 1 ? `the kubeconfig ${merged.files[0] ?? ''}` : `KUBECONFIG (${merged.files.join(':')})`;
  const contextName = requestedContext ?? merged.currentContext;
  if (contextName === null) throw new ClusterError(null, `${where} names no current context`);
  if (!merged.contexts.has(contextName))
    throw new ClusterError(null, `${where} has no context ${JSON.stringify(contextName.slice(0, 100))}`);
  const context = merged.contexts.get(contextName)?.value ?? {};
  const clusterEntry = merged.clusters.get(text(context['cluster']) ?? '');
  const cluster = clusterEntry?.value ?? {};
  const server = cluster['server'];
  if (clusterEntry === undefined || typeof server !== 'string' || !/^https?:\/\//.test(server))
    throw new ClusterError(null, `${where} names no server for context ${contextName}`);
  const user = await readUser(merged.users.get(text(context['user']) ?? ''));
  const caData = text(cluster['certificate-authority-data']);
  const caFile = text(cluster['certificate-authority']);
  const ca =
    caData !== undefined
      ? Buffer.from(caData, 'base64')
      : caFile === undefined
        ? undefined
        : await readBounded(pathFrom(clusterEntry.file, caFile));
  const tlsServerName = text(cluster['tls-server-name']);
  const proxyUrl = text(cluster['proxy-url']);
  return {
    server: server.replace(/\/+$/, ''),
    ...(ca === undefined ? {} : { ca }),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    ...(tlsServerName === undefined ? {} : { tlsServerName }),
    ...(proxyUrl === undefined ? {} : { proxyUrl }),
    user,
  };
}
