import { MIB } from '../../../domain/node/artifact/byte-units.js';
import type { ProfileName, UpgraderConfig } from './upgrader-config.js';

/** The agent the `flex` profile describes; the name a configuration without `agent.name` has. */
export const FLEX_AGENT_NAME = 'aks-flex-node';

const ARTIFACT_DEFAULTS: UpgraderConfig['artifact'] = {
  maxArchiveBytes: 256 * MIB,
  maxBinaryBytes: 256 * MIB,
  requireDigest: false,
  allowHttp: true,
  timeoutMs: 600_000,
  idleTimeoutMs: 60_000,
};

/**
 * The `agent` profile: the layout of an agent called `name` that knows nothing of agent-upgrade.
 * Every path, unit and member name comes from the name, as the Flex agent's do from its own. Its
 * defaults are the safe ones for such an agent: `sidecar` (its recovery runs `agent-upgrade
 * recover`, never `<last-good> recover`, which would start a second copy of an agent that has no
 * such command), no arguments, no nspawn machines, no cluster until one is configured.
 */
export function agentProfile(name: string): UpgraderConfig {
  return {
    profile: 'agent',
    root: '/',
    agent: { name, mode: 'sidecar', args: [], member: `${name}-linux-{arch}`, allowScripts: false },
    paths: {
      entry: `/usr/local/bin/${name}`,
      slotDir: `/usr/local/lib/${name}`,
      record: `/etc/${name}/agent-upgrade-signal.json`,
      state: `/etc/${name}/agent-upgrade-state.json`,
      lock: `/run/${name}-agent-upgrade.lock`,
      daemonState: `/etc/${name}/daemon-state.json`,
      unitDir: '/etc/systemd/system',
    },
    service: {
      manager: 'systemd',
      unit: `${name}.service`,
      recoveryUnit: `${name}-recovery.service`,
      restartSec: 30,
      startLimitBurst: 5,
      startLimitIntervalSec: 300,
      supervisorSocket: `/run/${name}-supervisor.sock`,
    },
    health: { timeoutMs: 30_000, stableMs: 3_000, pollMs: 250, watchMs: 600_000 },
    artifact: ARTIFACT_DEFAULTS,
    container: {
      manager: 'none',
      machinesDir: '/var/lib/machines',
      machines: [],
      binaryPath: `/usr/local/bin/${name}`,
    },
    cluster: { manager: 'none', machineName: null, kubeconfig: null, operationMode: 'auto' },
    trust: null,
  };
}

/**
 * The `flex` profile: the AKS Flex Node agent's production layout. It is the agent profile of its
 * name but for what the Flex agent is: self-hosted (its binary embeds the upgrader), started as
 * `agent --config …` by `aks-flex-node-agent.service`, mirrored into the nspawn machines `kube1`
 * and `kube2`, and driven by MachineOperations of its cluster.
 */
export const FLEX_PROFILE: UpgraderConfig = (() => {
  const derived = agentProfile(FLEX_AGENT_NAME);
  return {
    ...derived,
    profile: 'flex',
    agent: { ...derived.agent, mode: 'self-hosted', args: ['agent', '--config', '/etc/aks-flex-node/config.json'] },
    service: {
      ...derived.service,
      unit: 'aks-flex-node-agent.service',
      recoveryUnit: 'aks-flex-node-agent-recovery.service',
    },
    container: { ...derived.container, manager: 'nspawn', machines: ['kube1', 'kube2'] },
    cluster: { ...derived.cluster, manager: 'kubernetes' },
  };
})();

/**
 * Which profile a configuration file's defaults come from: the one it names; otherwise `flex`
 * for the Flex agent (no `agent.name`, or its own), and the `agent` profile of any other name.
 */
export function profileFor(named: ProfileName | undefined, agentName: string | undefined): UpgraderConfig {
  const name = agentName ?? FLEX_AGENT_NAME;
  const profile = named ?? (name === FLEX_AGENT_NAME ? 'flex' : 'agent');
  if (profile === 'agent') return agentProfile(name);
  return agentName === undefined ? FLEX_PROFILE : { ...FLEX_PROFILE, agent: { ...FLEX_PROFILE.agent, name } };
}
