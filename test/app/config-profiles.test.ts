/**
 * The profiles: `flex` as docs/configuration.md documents it, and the `agent` profile every other
 * agent's defaults come from, derived from its name; which one a configuration file gets.
 */
import { describe, expect, it } from 'vitest';
import { MIB } from '../../src/domain/node/artifact/byte-units.js';
import { agentProfile, FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { parseConfigValue } from '../../src/app/node/config/parse-config.js';
import { findRuleProblem } from '../../src/app/node/config/config-rules.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';

const FLEX_AS_DOCUMENTED: UpgraderConfig = {
  profile: 'flex',
  root: '/',
  agent: {
    name: 'aks-flex-node',
    mode: 'self-hosted',
    args: ['agent', '--config', '/etc/aks-flex-node/config.json'],
    member: 'aks-flex-node-linux-{arch}',
    allowScripts: false,
  },
  paths: {
    entry: '/usr/local/bin/aks-flex-node',
    slotDir: '/usr/local/lib/aks-flex-node',
    record: '/etc/aks-flex-node/agent-upgrade-signal.json',
    state: '/etc/aks-flex-node/agent-upgrade-state.json',
    lock: '/run/aks-flex-node-agent-upgrade.lock',
    daemonState: '/etc/aks-flex-node/daemon-state.json',
    unitDir: '/etc/systemd/system',
  },
  service: {
    manager: 'systemd',
    unit: 'aks-flex-node-agent.service',
    recoveryUnit: 'aks-flex-node-agent-recovery.service',
    restartSec: 30,
    startLimitBurst: 5,
    startLimitIntervalSec: 300,
    supervisorSocket: '/run/aks-flex-node-supervisor.sock',
  },
  health: { timeoutMs: 30_000, stableMs: 3_000, pollMs: 250, watchMs: 600_000 },
  artifact: {
    maxArchiveBytes: 256 * MIB,
    maxBinaryBytes: 256 * MIB,
    requireDigest: false,
    allowHttp: true,
    timeoutMs: 600_000,
    idleTimeoutMs: 60_000,
  },
  container: {
    manager: 'nspawn',
    machinesDir: '/var/lib/machines',
    machines: ['kube1', 'kube2'],
    binaryPath: '/usr/local/bin/aks-flex-node',
  },
  cluster: { manager: 'kubernetes', machineName: null, kubeconfig: null, operationMode: 'auto' },
  trust: null,
};

const parsed = (value: unknown): UpgraderConfig => {
  const result = parseConfigValue(value, 'test');
  if (!result.ok) throw new Error(result.failure.message);
  return result.value;
};

describe('profiles', () => {
  it('flex is the Flex agent as documented, and what an empty file gets', () => {
    expect(FLEX_PROFILE).toEqual(FLEX_AS_DOCUMENTED);
    expect(parsed({})).toEqual(FLEX_AS_DOCUMENTED);
    expect(parsed({ agent: { name: 'aks-flex-node' } })).toEqual(FLEX_AS_DOCUMENTED);
  });

  it("derives every path, unit and member of another agent from its name, with an embedder's safe defaults", () => {
    const mine = parsed({ agent: { name: 'my-agent' } });
    expect(mine).toEqual(agentProfile('my-agent'));
    expect(mine).toMatchObject({
      profile: 'agent',
      agent: { name: 'my-agent', mode: 'sidecar', args: [], member: 'my-agent-linux-{arch}' },
      paths: {
        entry: '/usr/local/bin/my-agent',
        slotDir: '/usr/local/lib/my-agent',
        lock: '/run/my-agent-agent-upgrade.lock',
      },
      service: { unit: 'my-agent.service', recoveryUnit: 'my-agent-recovery.service' },
      container: { manager: 'none' },
      cluster: { manager: 'none' },
    });
    expect(JSON.stringify(mine)).not.toContain('aks-flex-node');
    expect(findRuleProblem(mine)).toBeNull();
  });

  it('a profile named in the file wins over the one the name implies; keys given win over both', () => {
    expect(parsed({ profile: 'flex', agent: { name: 'my-agent' } }).paths).toEqual(FLEX_PROFILE.paths);
    expect(parsed({ profile: 'agent' })).toEqual(agentProfile('aks-flex-node'));
    const tuned = parsed({ agent: { name: 'my-agent', mode: 'self-hosted' }, service: { unit: 'mine.service' } });
    expect(tuned).toMatchObject({ agent: { mode: 'self-hosted' }, service: { unit: 'mine.service' } });
    expect(tuned.paths).toEqual(agentProfile('my-agent').paths);
  });

  it('refuses a profile it does not know', () => {
    expect(parseConfigValue({ profile: 'other' }, 'test')).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });
});
