import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/adapters/common/kubernetes/kube-client.js';
import { noProxyMatches, proxyFor } from '../../../src/adapters/common/kubernetes/proxy.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { startConnectProxy, type ConnectProxy } from '../../support/kube/connect-proxy.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/kube/fake-apiserver.js';
import { kubeconfigDocument, writeKubeconfigFile } from '../../support/kube/kubeconfig-builder.js';
import { machineOperation } from '../../support/kube/machine-operations.js';
import { makeScratch } from '../../support/real-tree.js';

const SERVER = new URL('https://kube.example.com:6443');

describe('which proxy a request goes through', () => {
  it('is the kubeconfig proxy-url whenever it is set, whatever the environment says', () => {
    const env = { HTTPS_PROXY: 'http://env-proxy:1', NO_PROXY: '*' };
    expect(proxyFor(SERVER, 'http://user:pw@proxy.internal:3128', env)?.href).toBe(
      'http://user:pw@proxy.internal:3128/',
    );
    expect(proxyFor(new URL('https://127.0.0.1:6443'), 'http://proxy:3128', {})?.host).toBe('proxy:3128');
  });

  it('is HTTPS_PROXY (then https_proxy) for an https server, HTTP_PROXY for an http one', () => {
    expect(proxyFor(SERVER, undefined, { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2' })?.host).toBe(
      'upper:1',
    );
    expect(proxyFor(SERVER, undefined, { https_proxy: 'lower:2' })?.href).toBe('http://lower:2/');
    expect(proxyFor(SERVER, undefined, { HTTP_PROXY: 'http://plain:3' })).toBeNull();
    expect(proxyFor(new URL('http://kube.example.com:8080'), undefined, { HTTP_PROXY: 'http://plain:3' })?.host).toBe(
      'plain:3',
    );
    expect(proxyFor(SERVER, undefined, {})).toBeNull();
  });

  it('is never used for localhost or loopback servers from the environment', () => {
    const env = { HTTPS_PROXY: 'http://proxy:1' };
    for (const server of [
      'https://localhost:6443',
      'https://127.0.0.1:6443',
      'https://127.1.2.3',
      'https://[::1]:6443',
    ])
      expect(proxyFor(new URL(server), undefined, env)).toBeNull();
  });

  it.each([
    ['*', 'kube.example.com', true],
    ['example.com', 'kube.example.com', true],
    ['example.com', 'example.com', true],
    ['.example.com', 'example.com', false],
    ['.example.com', 'kube.example.com', true],
    ['*.example.com', 'kube.example.com', true],
    ['ample.com', 'kube.example.com', false],
    ['other.com, KUBE.example.com', 'kube.example.com', true],
    ['kube.example.com:6443', 'kube.example.com', true],
    ['kube.example.com:443', 'kube.example.com', false],
    ['10.0.0.0/8', '10.1.2.3', true],
    ['10.0.0.0/8', '11.1.2.3', false],
    ['10.1.2.3', '10.1.2.3', true],
    ['fd00::/8', 'fd00::1', true],
    ['[fd00::1]:6443', 'fd00::1', true],
    ['', 'kube.example.com', false],
  ])('NO_PROXY %j for %s: exempt %s', (noProxy, host, exempt) => {
    expect(noProxyMatches(noProxy, host, '6443')).toBe(exempt);
    expect(
      proxyFor(new URL(`https://${host.includes(':') ? `[${host}]` : host}:6443`), undefined, {
        HTTPS_PROXY: 'p:1',
        NO_PROXY: noProxy,
      }) === null,
    ).toBe(exempt);
  });

  it('refuses a proxy that is not http:// with a ClusterError', () => {
    expect(() => proxyFor(SERVER, 'socks5://proxy:1080', {})).toThrow(ClusterError);
    expect(() => proxyFor(SERVER, undefined, { HTTPS_PROXY: 'https://proxy:443' })).toThrow(ClusterError);
  });
});

describe('requests through an HTTP CONNECT proxy', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let api: FakeApiServer;
  let proxy: ConnectProxy;
  beforeEach(async () => {
    scratch = makeScratch();
    api = await startFakeApiServer({ bookmarkIntervalMs: 200 });
    proxy = await startConnectProxy(['kube.test']);
  });
  afterEach(async () => {
    await proxy.close();
    await api.close();
    scratch.cleanup();
  });

  const kubeconfig = (cluster: Record<string, unknown>) =>
    writeKubeconfigFile(join(scratch.root, 'kubeconfig'), kubeconfigDocument(cluster, { token: 't' }));

  it('tunnel every connection, lists and watches alike, with the proxy credentials of the URL', async () => {
    api.create(machineOperation('op', 'node-1'));
    const port = new URL(api.origin).port;
    const proxyUrl = new URL(proxy.url);
    proxyUrl.username = 'agent';
    proxyUrl.password = 's3cret';
    const client = await KubeClient.connect(
      kubeconfig({ server: `http://kube.test:${port}`, 'proxy-url': proxyUrl.href }),
    );
    expect((await client.list({ limit: 10 })).items).toHaveLength(1);
    const events: string[] = [];
    const ended = new Promise<ClusterError | null>((resolve) => {
      void client.watch(
        { resourceVersion: '0', timeoutSeconds: 1 },
        (type) => events.push(type),
        (error) => resolve(error),
      );
    });
    expect(await ended).toBeNull();
    expect(events.length).toBeGreaterThan(0);
    expect(proxy.tunnels).toEqual([`kube.test:${port}`, `kube.test:${port}`]);
    expect(proxy.authorizations[0]).toBe(`Basic ${Buffer.from('agent:s3cret').toString('base64')}`);
  });

  it('are refused when the proxy refuses the tunnel: a ClusterError without a status', async () => {
    const client = await KubeClient.connect(kubeconfig({ server: 'http://elsewhere.test:1', 'proxy-url': proxy.url }));
    await expect(client.list({ limit: 1 })).rejects.toMatchObject({ constructor: ClusterError, status: null });
    expect(proxy.tunnels).toEqual([]);
  });

  it('take HTTP_PROXY from the environment given, and not for a loopback server', async () => {
    const port = new URL(api.origin).port;
    const env = { HTTP_PROXY: proxy.url };
    const viaName = await KubeClient.connect(kubeconfig({ server: `http://kube.test:${port}` }), { env });
    await viaName.list({ limit: 1 });
    const direct = await KubeClient.connect(kubeconfig({ server: api.origin }), { env });
    await direct.list({ limit: 1 });
    expect(proxy.tunnels).toEqual([`kube.test:${port}`]);
  });
});
