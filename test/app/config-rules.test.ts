import { describe, expect, it } from 'vitest';
import { checkConfigValue, parseConfigValue } from '../../src/app/node/config/parse-config.js';

const keysOf = (value: unknown): readonly string[] | null => {
  const check = checkConfigValue(value);
  return check.ok ? null : check.problem.keys;
};

describe('configuration: impossible health limits', () => {
  it.each([
    [
      'stableMs above timeoutMs',
      { timeoutMs: 1_000, stableMs: 5_000, pollMs: 250 },
      ['health.timeoutMs', 'health.stableMs', 'health.pollMs'],
    ],
    [
      'stableMs equal to timeoutMs (no time for the agent to appear)',
      { timeoutMs: 3_000, stableMs: 3_000, pollMs: 250 },
      ['health.timeoutMs', 'health.stableMs', 'health.pollMs'],
    ],
    ['pollMs above stableMs', { stableMs: 100, pollMs: 1_000 }, ['health.pollMs', 'health.stableMs']],
    ['stableMs of zero', { stableMs: 0 }, ['health.pollMs', 'health.stableMs']],
  ])('refuses %s (E_CONFIG), naming the keys', (_name, health, keys) => {
    expect(keysOf({ health })).toEqual(keys);
    expect(parseConfigValue({ health }, 'test')).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });

  it.each([
    ['negative', { timeoutMs: -1 }, 'health.timeoutMs'],
    ['zero', { pollMs: 0 }, 'health.pollMs'],
    ['negative', { stableMs: -5 }, 'health.stableMs'],
    ['fractional', { pollMs: 2.5 }, 'health.pollMs'],
  ])('refuses a %s value, naming it', (_name, health, key) => {
    expect(keysOf({ health })).toEqual([key]);
  });

  it('accepts the boundary: timeoutMs exactly stableMs plus one poll, pollMs equal to stableMs', () => {
    expect(keysOf({ health: { timeoutMs: 1_250, stableMs: 1_000, pollMs: 250 } })).toBeNull();
    expect(keysOf({ health: { timeoutMs: 1_000, stableMs: 250, pollMs: 250 } })).toBeNull();
  });
});

describe('configuration: a start limit that can never be reached', () => {
  it('refuses restartSec × startLimitBurst not below startLimitIntervalSec, naming the three keys', () => {
    expect(keysOf({ service: { restartSec: 60, startLimitBurst: 5, startLimitIntervalSec: 300 } })).toEqual([
      'service.restartSec',
      'service.startLimitBurst',
      'service.startLimitIntervalSec',
    ]);
  });

  it('accepts a limit that a crash loop reaches', () => {
    expect(keysOf({ service: { restartSec: 59, startLimitBurst: 5, startLimitIntervalSec: 300 } })).toBeNull();
    expect(keysOf({ service: { restartSec: 0, startLimitBurst: 100, startLimitIntervalSec: 1 } })).toBeNull();
  });
});

describe('configuration: every refused path names its key', () => {
  it.each([
    ['a path with ..', { paths: { slotDir: '/usr/local/../lib' } }, ['paths.slotDir']],
    ['a trailing slash', { paths: { record: '/etc/agent/' } }, ['paths.record']],
    ['a relative path', { container: { machinesDir: 'var/lib/machines' } }, ['container.machinesDir']],
    ['a relative kubeconfig', { cluster: { kubeconfig: 'kube/config' } }, ['cluster.kubeconfig']],
    ['the root directory as a file', { paths: { state: '/' } }, ['paths.state']],
    ['the root directory as the slot directory', { paths: { slotDir: '/' } }, ['paths.slotDir']],
    ['the root directory as the kubeconfig', { cluster: { kubeconfig: '/' } }, ['cluster.kubeconfig']],
    ['a root with ..', { root: '/tmp/../etc' }, ['root']],
    [
      'two roles on one path',
      { paths: { record: '/etc/agent/same.json', state: '/etc/agent/same.json' } },
      ['paths.record', 'paths.state'],
    ],
    [
      'the socket on the lock',
      { service: { supervisorSocket: '/run/aks-flex-node-agent-upgrade.lock' } },
      ['paths.lock', 'service.supervisorSocket'],
    ],
    [
      'a file inside the unit directory',
      { paths: { record: '/etc/systemd/system/record.json' } },
      ['paths.record', 'paths.unitDir'],
    ],
    [
      'the daemon state inside the unit directory',
      { paths: { daemonState: '/etc/systemd/system/daemon.json' } },
      ['paths.daemonState', 'paths.unitDir'],
    ],
    [
      'the slot directory inside the unit directory',
      { paths: { slotDir: '/etc/systemd/system/slots' } },
      ['paths.slotDir', 'paths.unitDir'],
    ],
    [
      'the unit directory inside the slot directory',
      { paths: { unitDir: '/usr/local/lib/aks-flex-node/units' } },
      ['paths.slotDir', 'paths.unitDir'],
    ],
    [
      'a path below a file',
      { paths: { state: '/etc/aks-flex-node/agent-upgrade-signal.json/state' } },
      ['paths.record', 'paths.state'],
    ],
    [
      'machines holding the slots',
      { container: { machinesDir: '/usr/local' } },
      ['container.machinesDir', 'paths.slotDir'],
    ],
    ['an agent name the layout cannot use', { agent: { name: 'agent@host' } }, ['agent.name']],
  ])('refuses %s', (_name, config, keys) => {
    expect(keysOf(config)).toEqual(keys);
  });

  it('names the configured key that collides with a derived slot', () => {
    const keys = keysOf({ paths: { entry: '/usr/local/lib/aks-flex-node/aks-flex-node-blue' } });
    expect(keys).toContain('paths.entry');
  });

  it('accepts the built-in profile and a sandbox configuration', () => {
    expect(keysOf({})).toBeNull();
    expect(
      keysOf({
        service: { manager: 'none' },
        container: { manager: 'none' },
        health: { timeoutMs: 12_000, stableMs: 1_500, pollMs: 250 },
      }),
    ).toBeNull();
  });
});
