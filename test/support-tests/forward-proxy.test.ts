import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { type ForwardProxy, startForwardProxy } from '../support/http/forward-proxy.js';
import { type HostileServer, serve, startHostileServer, truncate } from '../support/http/hostile-server.js';

const closers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c.close()));
});
async function proxy(): Promise<ForwardProxy> {
  const p = await startForwardProxy();
  closers.push(p);
  return p;
}
async function server(tls = false): Promise<HostileServer> {
  const s = await startHostileServer({ tls });
  closers.push(s);
  return s;
}

interface Reply {
  status: number | undefined;
  body: string;
  error: string | undefined;
}

/** A plain-proxy request as HTTP_PROXY clients send it: absolute URI to the proxy. */
function viaProxy(proxyUrl: string, target: string): Promise<Reply> {
  const p = new URL(proxyUrl);
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: p.hostname,
        port: p.port,
        path: target,
        agent: false,
        timeout: 3000,
        headers: { host: new URL(target).host, 'proxy-authorization': 'Basic c2VjcmV0' },
      },
      (res) => {
        let body = '';
        res.setEncoding('latin1');
        res.on('data', (c: string) => (body += c));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: res.statusCode, body, error: e.code }));
        res.on('end', () => resolve({ status: res.statusCode, body, error: undefined }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: undefined, body: '', error: e.code ?? e.message }));
    req.end();
  });
}

/** An HTTPS_PROXY-style request: CONNECT, then TLS to the origin through the tunnel. */
function viaTunnel(proxyUrl: string, target: string, ca: string | undefined): Promise<Reply> {
  const p = new URL(proxyUrl);
  const t = new URL(target);
  return new Promise((resolve) => {
    const fail = (e: NodeJS.ErrnoException): void =>
      resolve({ status: undefined, body: '', error: e.code ?? e.message });
    const connectReq = httpRequest({
      host: p.hostname,
      port: p.port,
      method: 'CONNECT',
      path: t.host,
      agent: false,
      timeout: 3000,
    });
    connectReq.on('timeout', () => connectReq.destroy(new Error('timeout')));
    connectReq.on('error', fail);
    connectReq.on('connect', (res, socket: Socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ status: res.statusCode, body: '', error: 'CONNECT refused' });
        return;
      }
      const req = httpsRequest(
        {
          // No `agent` key: with one (even `false`) node ignores createConnection and dials direct.
          host: t.hostname,
          port: t.port,
          path: t.pathname,
          timeout: 3000,
          createConnection: () =>
            tlsConnect({
              socket,
              servername: t.hostname === '127.0.0.1' ? undefined : t.hostname,
              ...(ca ? { ca } : {}),
            }),
        },
        (r) => {
          let body = '';
          r.setEncoding('latin1');
          r.on('data', (c: string) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode, body, error: undefined }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e: NodeJS.ErrnoException) => {
        socket.destroy();
        fail(e);
      });
      req.end();
    });
    connectReq.end();
  });
}

describe('forward proxy', () => {
  it('forwards an absolute-URI GET to an http origin and records it', async () => {
    const [p, s] = await Promise.all([proxy(), server()]);
    s.route('/a.tgz', serve('through the proxy'));
    const r = await viaProxy(p.url, s.url('/a.tgz?sig=1'));
    expect(r).toEqual({ status: 200, body: 'through the proxy', error: undefined });
    expect(p.requests).toEqual([expect.objectContaining({ method: 'GET', target: s.url('/a.tgz?sig=1') })]);
    expect(s.requests[0]?.path).toBe('/a.tgz?sig=1');
    // Proxy credentials are for the proxy only.
    expect(s.requests[0]?.headers['proxy-authorization']).toBeUndefined();
  });

  it('passes an upstream truncation on as a truncation', async () => {
    const [p, s] = await Promise.all([proxy(), server()]);
    s.route('/t', truncate('x'.repeat(1000), { declaredLength: 1000, sendBytes: 100 }));
    const r = await viaProxy(p.url, s.url('/t'));
    expect(r.error).toBe('ECONNRESET');
  });

  it('tunnels https with CONNECT; the origin certificate is still verified end to end', async () => {
    const [p, s] = await Promise.all([proxy(), server(true)]);
    s.route('/a.tgz', serve('tunnelled'));
    const ok = await viaTunnel(p.url, s.url('/a.tgz'), s.tls?.caPem);
    expect(ok).toEqual({ status: 200, body: 'tunnelled', error: undefined });
    expect(p.requests).toEqual([expect.objectContaining({ method: 'CONNECT', target: new URL(s.origin).host })]);
    const untrusted = await viaTunnel(p.url, s.url('/a.tgz'), undefined);
    expect(untrusted.error).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(s.requests).toHaveLength(1); // only the trusted attempt reached the origin
  });

  it('refuses non-loopback targets, so a test can never reach the network', async () => {
    const p = await proxy();
    expect((await viaProxy(p.url, 'http://example.invalid/x')).status).toBe(403);
    expect((await viaTunnel(p.url, 'https://example.invalid:443/x', undefined)).status).toBe(403);
  });
});

describe('forward proxy with a real env-honouring client (axios)', () => {
  const saved = {
    HTTP_PROXY: process.env.HTTP_PROXY,
    HTTPS_PROXY: process.env.HTTPS_PROXY,
    NO_PROXY: process.env.NO_PROXY,
  };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('sees axios use HTTP_PROXY (absolute URI) and HTTPS_PROXY (CONNECT)', async () => {
    const { default: axios } = await import('axios');
    const { Agent } = await import('node:https');
    const [p, plain, secure] = await Promise.all([proxy(), server(), server(true)]);
    plain.route('/a', serve('plain'));
    secure.route('/b', serve('secure'));
    process.env.HTTP_PROXY = p.url;
    process.env.HTTPS_PROXY = p.url;
    process.env.NO_PROXY = '';
    const opts = {
      timeout: 3000,
      responseType: 'text' as const,
      httpsAgent: new Agent({ ca: secure.tls?.caPem, keepAlive: false }),
    };
    expect((await axios.get<string>(plain.url('/a'), opts)).data).toBe('plain');
    // By name: axios' tunnel sets SNI to the host, and an IP as SNI draws a node deprecation warning.
    const secureUrl = secure.url('/b').replace('127.0.0.1', 'localhost');
    expect((await axios.get<string>(secureUrl, opts)).data).toBe('secure');
    expect(p.requests.map((r) => [r.method, r.target])).toEqual([
      ['GET', plain.url('/a')],
      ['CONNECT', new URL(secureUrl).host],
    ]);
  });
});
