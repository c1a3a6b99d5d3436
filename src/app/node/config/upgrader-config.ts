import { MIB } from '../../../domain/node/artifact/byte-units.js';
import type { AgentMode } from '../../../domain/node/recovery/recovery-vocabulary.js';
import type { LayoutSettings } from '../../../domain/node/layout/slot-layout.js';
import type { ProbeSettings } from '../../../domain/node/health/probe-target.js';
import type { TrustSettings } from '../../../domain/common/trust/trust-settings.js';

/**
 * The resolved configuration (docs/configuration.md): every key filled in from the profile.
 */
export type ServicePlatform = 'systemd' | 'supervisor' | 'none';
export type ContainerPlatform = 'nspawn' | 'none';
export type ClusterPlatform = 'kubernetes' | 'none';

export interface UpgraderConfig {
  readonly profile: 'flex';
  readonly root: string;
  readonly agent: {
    readonly name: string;
    readonly mode: AgentMode;
    readonly args: readonly string[];
    readonly member: string;
    readonly allowScripts: boolean;
  };
  /**
   * The host paths (docs/operations.md#the-managed-layout), as the domain's layout takes them
   * (before `--root`).
   */
  readonly paths: Omit<LayoutSettings, 'root' | 'agentName'>;
  readonly service: {
    readonly manager: ServicePlatform;
    readonly unit: string;
    readonly recoveryUnit: string;
    readonly restartSec: number;
    readonly startLimitBurst: number;
    readonly startLimitIntervalSec: number;
    /** The built-in supervisor's control socket (`service.manager: "supervisor"`). */
    readonly supervisorSocket: string;
  };
  readonly health: {
    readonly timeoutMs: number;
    readonly stableMs: number;
    readonly pollMs: number;
    /** The health probe (`health.probe`); absent, the gate is the process's stability alone. */
    readonly probe?: ProbeSettings;
    /**
     * The watch window (docs/protocol.md#watch-window): how long a candidate that passed the gate
     * must stay healthy before its upgrade is decided; 0 decides at the gate.
     */
    readonly watchMs: number;
  };
  readonly artifact: {
    readonly maxArchiveBytes: number;
    readonly maxBinaryBytes: number;
    readonly requireDigest: boolean;
    readonly allowHttp: boolean;
    readonly timeoutMs: number;
    readonly idleTimeoutMs: number;
  };
  readonly container: {
    readonly manager: ContainerPlatform;
    readonly machinesDir: string;
    readonly machines: readonly string[];
    readonly binaryPath: string;
  };
  readonly cluster: {
    readonly manager: ClusterPlatform;
    readonly machineName: string | null;
    readonly kubeconfig: string | null;
    readonly operationMode: 'auto' | 'disable';
  };
  /** Signed releases (docs/security.md#signed-releases); null trusts a release by its URL and digest. */
  readonly trust: TrustSettings;
}

/** The built-in `flex` profile: the AKS Flex Node agent's production layout. */
export const FLEX_PROFILE: UpgraderConfig = {
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

/** Where the configuration file is looked up when `--config` is not given (under the root). */
export const DEFAULT_CONFIG_PATH = '/etc/aks-flex-node/agent-upgrade.json';
export const CONFIG_TEXT_MAX_BYTES = 1024 * 1024;
