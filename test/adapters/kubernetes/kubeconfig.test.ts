import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Credentials } from '../../../src/adapters/common/kubernetes/credentials.js';
import { KubeHttp } from '../../../src/adapters/common/kubernetes/kube-http.js';
import { loadClusterConfig } from '../../../src/adapters/common/kubernetes/kubeconfig.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { serve, startHostileServer, type HostileServer } from '../../support/http/hostile-server.js';
import { kubeconfigDocument } from '../../support/kube/kubeconfig-builder.js';
import { makeScratch } from '../../support/real-tree.js';

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return JSON.stringify(kubeconfigDocument(cluster, user));
}

const EXEC = { apiVersion: 'client.authentication.k8s.io/v1', command: 'plugin', interactiveMode: 'Never' };

describe('cluster access from a kubeconfig', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let server: HostileServer | undefined;
  const file = (name: string, content: string) => {
    const path = join(scratch.root, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    scratch.cleanup();
  });

  it('names a token file relative to the kubeconfig and reads inline certificate data', async () => {
    const path = file(
      'config.yaml',
      kubeconfig(
        { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': Buffer.from('CA').toString('base64') },
        {
          tokenFile: 'token',
          'client-certificate-data': Buffer.from('CERT').toString('base64'),
          'client-key-data': Buffer.from('KEY').toString('base64'),
        },
      ),
    );
    const config = await loadClusterConfig(path);
    expect({
      server: config.server,
      tokenFile: config.user.tokenFile,
      ca: config.ca?.toString(),
      cert: config.user.certData?.toString(),
      key: config.user.keyData?.toString(),
      verify: config.rejectUnauthorized,
    }).toEqual({
      server: 'https://10.0.0.1:6443',
      tokenFile: join(scratch.root, 'token'),
      ca: 'CA',
      cert: 'CERT',
      key: 'KEY',
      verify: true,
    });
  });

  it('reads tls-server-name and proxy-url of the cluster', async () => {
    const path = file(
      'named.yaml',
      kubeconfig(
        { server: 'https://kube.test:6443', 'tls-server-name': 'localhost', 'proxy-url': 'http://127.0.0.1:3128' },
        { token: 't' },
      ),
    );
    expect(await loadClusterConfig(path)).toMatchObject({
      tlsServerName: 'localhost',
      proxyUrl: 'http://127.0.0.1:3128',
    });
  });

  it('uses the in-cluster service account when nothing else is configured, naming its token file', async () => {
    const serviceAccount = join(scratch.root, 'sa');
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, 'token'), 'sa-token\n');
    writeFileSync(join(serviceAccount, 'ca.crt'), 'SA-CA');
    const config = await loadClusterConfig(
      null,
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      serviceAccount,
    );
    expect({ server: config.server, user: config.user, ca: config.ca?.toString() }).toEqual({
      server: 'https://[fd00::1]:6443',
      user: { tokenFile: join(serviceAccount, 'token') },
      ca: 'SA-CA',
    });
    await expect(
      loadClusterConfig(null, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, join(scratch.root, 'missing')),
    ).rejects.toBeInstanceOf(ClusterError);
  });

  it('merges every KUBECONFIG file as kubectl does: first wins per name, current-context from the first that sets it', async () => {
    mkdirSync(join(scratch.root, 'second'));
    const first = file(
      'first.yaml',
      JSON.stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://first:1', 'certificate-authority': 'first-ca.pem' } }],
        users: [{ name: 'u', user: { token: 'first-token' } }],
      }),
    );
    file('first-ca.pem', 'FIRST-CA');
    const second = file(
      'second/config.yaml',
      JSON.stringify({
        'current-context': 'x',
        clusters: [{ name: 'c', cluster: { server: 'https://second:2' } }],
        users: [
          { name: 'u', user: { token: 'second-token' } },
          { name: 'v', user: { tokenFile: 'token' } },
        ],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'v' } }],
      }),
    );
    const third = file('third.yaml', JSON.stringify({ 'current-context': 'ignored' }));
    const config = await loadClusterConfig(null, {
      KUBECONFIG: `${join(scratch.root, 'absent.yaml')}:${first}::${second}:${third}:${first}`,
    });
    expect({ server: config.server, ca: config.ca?.toString(), user: config.user }).toEqual({
      server: 'https://first:1',
      ca: 'FIRST-CA',
      // The user comes from the second file, so its relative token file is relative to that file.
      user: { tokenFile: join(scratch.root, 'second', 'token') },
    });
    await expect(loadClusterConfig(null, { KUBECONFIG: join(scratch.root, 'absent.yaml') })).rejects.toBeInstanceOf(
      ClusterError,
    );
  });

  it('names an exec plugin, resolving a command with a slash against the kubeconfig', async () => {
    const relative = await loadClusterConfig(
      file(
        'exec.yaml',
        kubeconfig(
          { server: 'https://h' },
          {
            exec: {
              ...EXEC,
              command: './bin/plugin',
              args: ['--flag'],
              env: [{ name: 'A', value: 'b' }],
              provideClusterInfo: true,
            },
          },
        ),
      ),
    );
    expect(relative.user.exec).toEqual({
      apiVersion: EXEC.apiVersion,
      command: join(scratch.root, 'bin/plugin'),
      args: ['--flag'],
      env: { A: 'b' },
      provideClusterInfo: true,
    });
    const bare = await loadClusterConfig(file('bare.yaml', kubeconfig({ server: 'https://h' }, { exec: EXEC })));
    expect(bare.user.exec?.command).toBe('plugin');
    const beta = await loadClusterConfig(
      file(
        'beta.yaml',
        kubeconfig(
          { server: 'https://h' },
          { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: '/p' } },
        ),
      ),
    );
    expect(beta.user.exec?.apiVersion).toBe('client.authentication.k8s.io/v1beta1');
  });

  it('refuses an exec plugin named in a kubeconfig others can change', async () => {
    const path = file('shared.yaml', kubeconfig({ server: 'https://h' }, { exec: EXEC }));
    chmodSync(path, 0o666);
    await expect(loadClusterConfig(path)).rejects.toBeInstanceOf(ClusterError);
    chmodSync(path, 0o644);
    expect((await loadClusterConfig(path)).user.exec?.command).toBe('plugin');
  });

  it.each([
    ['an auth provider', kubeconfig({ server: 'https://h' }, { 'auth-provider': { name: 'oidc' } })],
    ['an exec plugin beside a token', kubeconfig({ server: 'https://h' }, { exec: EXEC, token: 't' })],
    [
      'a v1 exec plugin without interactiveMode',
      kubeconfig({ server: 'https://h' }, { exec: { ...EXEC, interactiveMode: undefined } }),
    ],
    [
      'an exec plugin that needs a terminal',
      kubeconfig({ server: 'https://h' }, { exec: { ...EXEC, interactiveMode: 'Always' } }),
    ],
    [
      'an exec plugin of an unknown apiVersion',
      kubeconfig({ server: 'https://h' }, { exec: { ...EXEC, apiVersion: 'x/v9' } }),
    ],
    ['a client certificate without its key', kubeconfig({ server: 'https://h' }, { 'client-certificate': 'c.pem' })],
    ['no current context', JSON.stringify({ apiVersion: 'v1', kind: 'Config' })],
    ['no server', kubeconfig({}, { token: 't' })],
    ['a non-http server', kubeconfig({ server: 'ftp://h' }, { token: 't' })],
    ['not YAML', '{ unbalanced: ['],
  ])('refuses %s with a ClusterError', async (_name, content) => {
    await expect(loadClusterConfig(file('bad.yaml', content))).rejects.toBeInstanceOf(ClusterError);
  });

  it('trusts the kubeconfig CA for TLS and refuses a server it does not vouch for', async () => {
    server = await startHostileServer({ tls: true });
    server.route('/api', serve('{"kind":"APIVersions"}', { headers: { 'content-type': 'application/json' } }));
    const http = async (name: string, cluster: Record<string, unknown>): Promise<KubeHttp> => {
      const config = await loadClusterConfig(file(name, kubeconfig(cluster, { token: 't' })));
      return new KubeHttp(config, new Credentials(config.user, null, Date.now), null);
    };
    const trusted = await http('ok.yaml', {
      server: server.origin,
      'certificate-authority-data': Buffer.from(server.tls?.caPem ?? '').toString('base64'),
    });
    expect(await trusted.call('GET', '/api')).toEqual({ kind: 'APIVersions' });
    trusted.close();
    const untrusted = await http('no-ca.yaml', { server: server.origin });
    await expect(untrusted.call('GET', '/api')).rejects.toMatchObject({ constructor: ClusterError, status: null });
    untrusted.close();
    expect(server.requests.filter((request) => request.path === '/api')).toHaveLength(1);
    expect(server.requests[0]?.headers['authorization']).toBe('Bearer t');
  });
});
