import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import { ClusterError } from '../../domain/port-errors.js';

/** What a request to the API server needs: where, which credentials, which TLS trust. */
export interface ClusterAccess {
  readonly server: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tls: {
    readonly ca?: Buffer;
    readonly cert?: Buffer;
    readonly key?: Buffer;
    readonly rejectUnauthorized: boolean;
  };
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const KUBECONFIG_MAX_BYTES = 1024 * 1024;

/**
 * Reads cluster access from a kubeconfig file, or by default from KUBECONFIG (its first file),
 * the in-cluster service account, or ~/.kube/config. Supported credentials: bearer tokens
 * (inline or file), client certificates and basic auth; exec plugins and auth providers are
 * refused with a clear error rather than half-supported. Loaded without the full Kubernetes
 * client, whose generated models cost ~70 MiB of RSS (docs/benchmarks.md#daemon-under-load: idle
 * RSS ≤ 100 MiB).
 */
export async function loadClusterAccess(
  kubeconfigPath: string | null,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Promise<ClusterAccess> {
  if (kubeconfigPath !== null) return fromKubeconfig(kubeconfigPath);
  const fromEnv = env['KUBECONFIG']?.split(':').find((entry) => entry !== '');
  if (fromEnv !== undefined) return fromKubeconfig(fromEnv);
  const host = env['KUBERNETES_SERVICE_HOST'];
  if (host !== undefined && host !== '')
    return inCluster(host, env['KUBERNETES_SERVICE_PORT'] ?? '443', serviceAccountDir);
  return fromKubeconfig(join(homedir(), '.kube', 'config'));
}

async function inCluster(host: string, port: string, serviceAccountDir: string): Promise<ClusterAccess> {
  const token = (await readSecret(join(serviceAccountDir, 'token'))).toString('utf8').trim();
  const ca = await readSecret(join(serviceAccountDir, 'ca.crt'));
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { server, headers: { authorization: `Bearer ${token}` }, tls: { ca, rejectUnauthorized: true } };
}

async function fromKubeconfig(path: string): Promise<ClusterAccess> {
  const text = (await readSecret(path)).toString('utf8');
  let document: unknown;
  try {
    document = load(text);
  } catch {
    throw new ClusterError(null, `the kubeconfig ${path} is not valid YAML`);
  }
  const config = record(document);
  const contextName = config['current-context'];
  if (typeof contextName !== 'string' || contextName === '')
    throw new ClusterError(null, `the kubeconfig ${path} names no current context`);
  const context = record(named(config['contexts'], contextName)?.['context']);
  const cluster = record(named(config['clusters'], context['cluster'])?.['cluster']);
  const user = record(named(config['users'], context['user'])?.['user']);
  const server = cluster['server'];
  if (typeof server !== 'string' || !/^https?:\/\//.test(server))
    throw new ClusterError(null, `the kubeconfig ${path} names no server for context ${contextName}`);
  if (user['exec'] !== undefined || user['auth-provider'] !== undefined) {
    throw new ClusterError(
      null,
      `the kubeconfig ${path} uses an exec plugin or auth provider, which the daemon does not run; use a token or a client certificate`,
    );
  }
  const base = dirname(path);
  const bytes = async (inline: unknown, file: unknown): Promise<Buffer | undefined> => {
    if (typeof inline === 'string' && inline !== '') return Buffer.from(inline, 'base64');
    if (typeof file === 'string' && file !== '') return readSecret(isAbsolute(file) ? file : join(base, file));
    return undefined;
  };
  const headers: Record<string, string> = {};
  const token =
    typeof user['token'] === 'string'
      ? user['token']
      : (await bytes(undefined, user['tokenFile']))?.toString('utf8').trim();
  if (token !== undefined && token !== '') headers['authorization'] = `Bearer ${token}`;
  else if (typeof user['username'] === 'string' && typeof user['password'] === 'string') {
    headers['authorization'] = `Basic ${Buffer.from(`${user['username']}:${user['password']}`).toString('base64')}`;
  }
  const ca = await bytes(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = await bytes(user['client-certificate-data'], user['client-certificate']);
  const key = await bytes(user['client-key-data'], user['client-key']);
  return {
    server: server.replace(/\/+$/, ''),
    headers,
    tls: {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined ? {} : { cert }),
      ...(key === undefined ? {} : { key }),
      rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    },
  };
}

async function readSecret(path: string): Promise<Buffer> {
  try {
    const content = await readFile(path);
    if (content.length > KUBECONFIG_MAX_BYTES)
      throw new ClusterError(null, `${path} is larger than ${KUBECONFIG_MAX_BYTES} bytes`);
    return content;
  } catch (error) {
    if (error instanceof ClusterError) throw error;
    throw new ClusterError(null, `${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

function named(list: unknown, name: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(list) || typeof name !== 'string') return undefined;
  const found = list.find((entry) => record(entry)['name'] === name);
  return found === undefined ? undefined : record(found);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
