import { describe, expect, it } from 'vitest';
import {
  describeProbeTarget,
  isLoopbackAddress,
  isLoopbackHost,
  parseProbeUrl,
  probePathProblem,
} from '../../src/domain/node/health/probe-target.js';

const SECRET = 'CANARY-probe-7f1e';

describe('probe targets: loopback only', () => {
  it.each([
    ['http://localhost:8080/healthz', true],
    ['http://LOCALHOST./healthz', true],
    ['http://127.0.0.1:9/', true],
    ['http://127.1/', true],
    ['http://0x7f.0.0.1/', true],
    ['http://127.255.255.254/', true],
    ['http://[::1]:8080/', true],
    ['http://10.0.0.1/', false],
    ['http://128.0.0.1/', false],
    ['http://[::2]/', false],
    ['http://[::ffff:7f00:1]/', false],
    ['http://localhost.example/', false],
    ['http://127.0.0.1.nip.io/', false],
  ])('%s → loopback %s', (text, loopback) => {
    expect(isLoopbackHost(new URL(text).hostname)).toBe(loopback);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['192.168.1.1', false],
    ['::ffff:10.0.0.1', false],
    ['fe80::1', false],
  ])('a resolved address %s is loopback: %s', (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });
});

describe('probe URLs', () => {
  it('accepts a loopback http URL and keeps its query out of every printable form', () => {
    const parsed = parseProbeUrl(`http://127.0.0.1:8080/healthz?token=${SECRET}`);
    if (!parsed.ok) throw new Error(parsed.failure.message);
    const printed = [
      parsed.value.toString(),
      JSON.stringify({ url: parsed.value }),
      describeProbeTarget({ kind: 'http', url: parsed.value }),
    ];
    expect(printed.join(' ')).not.toContain(SECRET);
    expect(parsed.value.revealForRequest()).toContain(SECRET);
  });

  it.each([
    ['https (a loopback endpoint needs no TLS)', 'https://127.0.0.1/healthz'],
    ['another host', 'http://169.254.169.254/latest/meta-data'],
    ['user information', `http://user:${SECRET}@127.0.0.1/`],
    ['a fragment', 'http://127.0.0.1/#x'],
    ['whitespace', 'http://127.0.0.1/ x'],
    ['no host', 'http:///healthz'],
    ['a relative URL', '/healthz'],
  ])('refuses %s (E_CONFIG) without repeating the URL', (_name, text) => {
    const parsed = parseProbeUrl(text);
    expect(parsed).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
    if (!parsed.ok) expect(parsed.failure.message).not.toContain(SECRET);
  });

  it('checks a unix-socket request path, and names the socket without the query', () => {
    expect(probePathProblem('/healthz?verbose=1')).toBeNull();
    expect(probePathProblem('healthz')).not.toBeNull();
    expect(probePathProblem('/a b')).not.toBeNull();
    expect(describeProbeTarget({ kind: 'unix-http', socket: '/run/a.sock', path: `/h?k=${SECRET}` })).not.toContain(
      SECRET,
    );
  });
});
