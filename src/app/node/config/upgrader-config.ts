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

/** `flex`: the AKS Flex Node agent's layout; `agent`: a layout derived from any agent's name. */
export const PROFILES = ['flex', 'agent'] as const;
export type ProfileName = (typeof PROFILES)[number];

export interface UpgraderConfig {
  readonly profile: ProfileName;
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

/** Where the configuration file is looked up when `--config` is not given (under the root). */
export const DEFAULT_CONFIG_PATH = '/etc/aks-flex-node/agent-upgrade.json';
export const CONFIG_TEXT_MAX_BYTES = 1024 * 1024;
