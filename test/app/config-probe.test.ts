import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkConfigValue, parseConfigValue } from '../../src/app/node/config/parse-config.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const SECRET = 'CANARY-probe-config-3c9a';
const keysOf = (value: unknown): readonly string[] | null => {
  const check = checkConfigValue(value);
  return check.ok ? null : check.problem.keys;
};
const probeOf = (probe: unknown) => {
  const parsed = parseConfigValue({ health: { probe } }, 'test');
  if (!parsed.ok) throw new Error(parsed.failure.message);
  return parsed.value.health.probe;
};

describe('configuration: health.probe', () => {
  it('has no probe by default, nor with probe: null', () => {
    expect(probeOf(undefined)).toBeUndefined();
    expect(probeOf(null)).toBeUndefined();
  });

  it('fills the timings with their defaults and keeps the other health keys', () => {
    const parsed = parseConfigValue({ health: { stableMs: 2_000, probe: { exec: { command: ['/bin/true'] } } } }, 't');
    if (!parsed.ok) throw new Error(parsed.failure.message);
    expect(parsed.value.health).toMatchObject({
      timeoutMs: 30_000,
      stableMs: 2_000,
      pollMs: 250,
      probe: {
        target: { kind: 'exec', command: ['/bin/true'] },
        periodMs: 1_000,
        timeoutMs: 1_000,
        successThreshold: 1,
        failureThreshold: 3,
      },
    });
  });

  it('reads the three targets: exec, a loopback URL, a unix socket (default path "/")', () => {
    expect(probeOf({ exec: { command: ['/usr/bin/check', 'a; b'] } })?.target).toEqual({
      kind: 'exec',
      command: ['/usr/bin/check', 'a; b'],
    });
    const http = probeOf({ http: { url: `http://127.0.0.1:8080/healthz?token=${SECRET}` }, periodMs: 500 });
    expect(http?.target.kind).toBe('http');
    expect(http?.periodMs).toBe(500);
    // The resolved configuration can be printed: the query stays out.
    expect(JSON.stringify(http)).not.toContain(SECRET);
    expect(probeOf({ http: { socket: '/run/agent/health.sock' } })?.target).toEqual({
      kind: 'unix-http',
      socket: '/run/agent/health.sock',
      path: '/',
    });
  });

  it.each([
    [
      'both exec and http',
      { exec: { command: ['/bin/true'] }, http: { url: 'http://localhost/' } },
      ['health.probe.exec', 'health.probe.http'],
    ],
    ['neither exec nor http', { periodMs: 1_000 }, ['health.probe.exec', 'health.probe.http']],
    [
      'a url and a socket',
      { http: { url: 'http://localhost/', socket: '/run/a.sock' } },
      ['health.probe.http.url', 'health.probe.http.socket'],
    ],
    [
      'a url and a path',
      { http: { url: 'http://localhost/', path: '/x' } },
      ['health.probe.http.url', 'health.probe.http.path'],
    ],
    ['http without url or socket', { http: { path: '/x' } }, ['health.probe.http.url', 'health.probe.http.socket']],
    [
      'a program found through PATH',
      { exec: { command: ['curl', 'http://localhost/'] } },
      ['health.probe.exec.command[0]'],
    ],
    ['an empty command', { exec: { command: [] } }, ['health.probe.exec.command']],
    [
      'a control character in an argument',
      { exec: { command: ['/bin/true', 'a\nb'] } },
      ['health.probe.exec.command[1]'],
    ],
    ['a host that is not loopback', { http: { url: 'http://10.1.2.3/healthz' } }, ['health.probe.http.url']],
    ['user information in the URL', { http: { url: `http://u:${SECRET}@127.0.0.1/` } }, ['health.probe.http.url']],
    ['a relative socket path', { http: { socket: 'run/a.sock' } }, ['health.probe.http.socket']],
    ['a request path without "/"', { http: { socket: '/run/a.sock', path: 'healthz' } }, ['health.probe.http.path']],
    ['a period under 100 ms', { exec: { command: ['/bin/true'] }, periodMs: 10 }, ['health.probe.periodMs']],
    ['a zero timeout', { exec: { command: ['/bin/true'] }, timeoutMs: 0 }, ['health.probe.timeoutMs']],
    [
      'a successThreshold of 0',
      { exec: { command: ['/bin/true'] }, successThreshold: 0 },
      ['health.probe.successThreshold'],
    ],
    [
      'a fractional failureThreshold',
      { exec: { command: ['/bin/true'] }, failureThreshold: 1.5 },
      ['health.probe.failureThreshold'],
    ],
    [
      'an unknown key',
      { exec: { command: ['/bin/true'] }, initialDelaySeconds: 5 },
      ['health.probe.initialDelaySeconds'],
    ],
  ])('refuses %s (E_CONFIG), naming the keys', (_name, probe, keys) => {
    expect(keysOf({ health: { probe } })).toEqual(keys);
    const parsed = parseConfigValue({ health: { probe } }, 'test');
    expect(parsed).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
    if (!parsed.ok) expect(parsed.failure.message).not.toContain(SECRET);
  });

  it('refuses a health timeout that cannot hold stability and successThreshold attempts', () => {
    const probe = { exec: { command: ['/bin/true'] }, periodMs: 1_000, timeoutMs: 1_000, successThreshold: 3 };
    const health = { timeoutMs: 6_249, stableMs: 3_000, pollMs: 250, probe };
    expect(keysOf({ health })).toEqual([
      'health.timeoutMs',
      'health.probe.periodMs',
      'health.probe.timeoutMs',
      'health.probe.successThreshold',
    ]);
    // The boundary: 3000 + 250 + 2 × 1000 + 1000.
    expect(keysOf({ health: { ...health, timeoutMs: 6_250 } })).toBeNull();
  });
});

describe('a refused health.probe through the CLI', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
  });
  afterEach(() => scratch.cleanup());

  it('migrate: E_CONFIG (exit 2), nothing written, the URL secret not echoed', async () => {
    const config = { health: { probe: { http: { url: `http://192.0.2.7/healthz?sig=${SECRET}` } } } };
    writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), JSON.stringify(config));
    const before = snapshotTree(scratch.root, []);
    const run = await runCliInMemory(['migrate', '--root', scratch.root, '--json']);
    const document = JSON.parse(run.stdout) as { error: { code: string } };
    expect({ exitCode: run.exitCode, code: document.error.code }).toEqual({ exitCode: 2, code: 'E_CONFIG' });
    expect(run.stdout + run.stderr).not.toContain(SECRET);
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });
});
