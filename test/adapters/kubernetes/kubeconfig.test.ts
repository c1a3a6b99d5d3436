import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeHttp } from '../../../src/adapters/kubernetes/kube-http.js';
import { loadClusterAccess } from '../../../src/adapters/kubernetes/kubeconfig.js';
import { ClusterError } from '../../../src/domain/port-errors.js';
import { serve, startHostileServer, type HostileServer } from '../../support/http/hostile-server.js';
import { makeScratch } from '../../support/real-tree.js';

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

describe('cluster access from a kubeconfig', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let server: HostileServer | undefined;
  const file = (name: string, content: string) => {
    const path = join(scratch.root, name);
    writeFileSync(path, content);
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

  it('reads a token file relative to the kubeconfig and inline certificate data', async () => {
    file('token', 'secret-token\n');
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
    const access = await loadClusterAccess(path);
    expect(access.server).toBe('https://10.0.0.1:6443');
    expect(access.headers).toEqual({ authorization: 'Bearer secret-token' });
    expect({
      ca: access.tls.ca?.toString(),
      cert: access.tls.cert?.toString(),
      key: access.tls.key?.toString(),
      verify: access.tls.rejectUnauthorized,
    }).toEqual({ ca: 'CA', cert: 'CERT', key: 'KEY', verify: true });
  });

  it('uses the in-cluster service account when nothing else is configured', async () => {
    const serviceAccount = join(scratch.root, 'sa');
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, 'token'), 'sa-token\n');
    writeFileSync(join(serviceAccount, 'ca.crt'), 'SA-CA');
    const access = await loadClusterAccess(
      null,
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      serviceAccount,
    );
    expect({ server: access.server, headers: access.headers, ca: access.tls.ca?.toString() }).toEqual({
      server: 'https://[fd00::1]:6443',
      headers: { authorization: 'Bearer sa-token' },
      ca: 'SA-CA',
    });
    await expect(
      loadClusterAccess(null, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, join(scratch.root, 'missing')),
    ).rejects.toBeInstanceOf(ClusterError);
  });

  it('takes the first file of KUBECONFIG', async () => {
    const path = file('env.yaml', kubeconfig({ server: 'http://127.0.0.1:1' }, { token: 't' }));
    expect((await loadClusterAccess(null, { KUBECONFIG: `${path}:/nonexistent` })).server).toBe('http://127.0.0.1:1');
  });

  it.each([
    ['an exec plugin', kubeconfig({ server: 'https://h' }, { exec: { command: '/bin/evil' } })],
    ['an auth provider', kubeconfig({ server: 'https://h' }, { 'auth-provider': { name: 'oidc' } })],
    ['no current context', JSON.stringify({ apiVersion: 'v1', kind: 'Config' })],
    ['no server', kubeconfig({}, { token: 't' })],
    ['a non-http server', kubeconfig({ server: 'ftp://h' }, { token: 't' })],
    ['not YAML', '{ unbalanced: ['],
  ])('refuses %s with a ClusterError', async (_name, content) => {
    await expect(loadClusterAccess(file('bad.yaml', content))).rejects.toBeInstanceOf(ClusterError);
  });

  it('trusts the kubeconfig CA for TLS and refuses a server it does not vouch for', async () => {
    server = await startHostileServer({ tls: true });
    server.route('/api', serve('{"kind":"APIVersions"}', { headers: { 'content-type': 'application/json' } }));
    const trusted = new KubeHttp(
      await loadClusterAccess(
        file(
          'ok.yaml',
          kubeconfig(
            {
              server: server.origin,
              'certificate-authority-data': Buffer.from(server.tls?.caPem ?? '').toString('base64'),
            },
            { token: 't' },
          ),
        ),
      ),
    );
    expect(await trusted.call('GET', '/api')).toEqual({ kind: 'APIVersions' });
    trusted.close();
    const untrusted = new KubeHttp(
      await loadClusterAccess(file('no-ca.yaml', kubeconfig({ server: server.origin }, { token: 't' }))),
    );
    await expect(untrusted.call('GET', '/api')).rejects.toMatchObject({ constructor: ClusterError, status: null });
    untrusted.close();
    expect(server.requests.filter((request) => request.path === '/api')).toHaveLength(1);
    expect(server.requests[0]?.headers['authorization']).toBe('Bearer t');
  });
});
