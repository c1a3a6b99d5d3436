import { X509Certificate } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CertVariant,
  type HostileServer,
  serve,
  startHostileServer,
  tlsMaterial,
} from '../support/http/hostile-server.js';
import { observe } from './helpers.js';

const servers: HostileServer[] = [];
async function start(certificate: CertVariant = 'valid'): Promise<HostileServer> {
  const s = await startHostileServer({ tls: true, certificate });
  servers.push(s);
  s.route('/a.tgz', serve('payload'));
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('TLS material (openssl, generated per process)', () => {
  it('issues every variant from one CA, except the self-signed leaf', async () => {
    const ca = new X509Certificate((await tlsMaterial()).caPem);
    for (const v of ['valid', 'wrong-host', 'expired'] as const) {
      expect(new X509Certificate((await tlsMaterial(v)).certPem).checkIssued(ca)).toBe(true);
    }
    expect(new X509Certificate((await tlsMaterial('self-signed')).certPem).checkIssued(ca)).toBe(false);
    const expired = new X509Certificate((await tlsMaterial('expired')).certPem);
    expect(new Date(expired.validTo).getTime()).toBeLessThan(Date.now());
  });

  it('is cached: the same PEMs on every call', async () => {
    expect(await tlsMaterial()).toBe(await tlsMaterial());
  });
});

describe('https hostile server', () => {
  it('is trusted with the CA, by IP and by localhost', async () => {
    const s = await start();
    const ca = s.tls?.caPem;
    expect(s.url('/a.tgz')).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/a\.tgz$/);
    const byIp = await observe(s.url('/a.tgz'), { ca });
    expect([byIp.status, byIp.body.toString(), byIp.error]).toEqual([200, 'payload', undefined]);
    const byName = await observe(s.url('/a.tgz').replace('127.0.0.1', 'localhost'), { ca });
    expect(byName.status).toBe(200);
  });

  it('is refused without the CA (unknown issuer)', async () => {
    const s = await start();
    const r = await observe(s.url('/a.tgz'));
    expect(r.status).toBeUndefined();
    expect(r.error?.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(s.requests).toHaveLength(0); // nothing crossed the failed handshake
  });

  it.each([
    ['wrong-host', 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['expired', 'CERT_HAS_EXPIRED'],
    ['self-signed', 'DEPTH_ZERO_SELF_SIGNED_CERT'],
  ] as const)('a %s certificate is refused even with the CA trusted (%s)', async (variant, code) => {
    const s = await start(variant);
    const r = await observe(s.url('/a.tgz'), { ca: s.tls?.caPem });
    expect(r.error?.code).toBe(code);
    expect(s.requests).toHaveLength(0);
  });
});
