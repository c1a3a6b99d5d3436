import { createHash } from 'node:crypto';
import type { ProbeSettings } from '../../src/domain/node/health/probe-target.js';
import { hostArchitecture } from '../../src/adapters/node/host/host-architecture.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { PortOverrides } from '../../src/app/node/composition/port-overrides.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import type { Logger } from '../../src/ports/common/logger.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { MemoryHealthProbe } from '../../src/adapters/node/memory/memory-health-probe.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { writeExecutable } from './real-tree.js';
import { RecordingLogger } from './recording-logger.js';

/** The flex profile re-rooted under `root`, with no service manager and no container. */
export function sandboxConfig(root: string, changes: Partial<UpgraderConfig> = {}): UpgraderConfig {
  return {
    ...FLEX_PROFILE,
    root,
    service: { ...FLEX_PROFILE.service, manager: 'none' },
    container: { ...FLEX_PROFILE.container, manager: 'none' },
    ...changes,
  };
}

/** An Upgrader over the real host adapters (node:fs, flock) confined to `root`. */
export function sandboxUpgrader(
  root: string,
  changes: Partial<UpgraderConfig> = {},
  overrides: PortOverrides = {},
  logger: Logger = new RecordingLogger(),
): Upgrader {
  const created = createUpgrader({
    config: sandboxConfig(root, changes),
    identity: { euid: 0, arch: hostArchitecture(), pid: process.pid, command: 'vitest' },
    logger,
    overrides,
  });
  if (!created.ok) throw new Error(`sandbox upgrader: ${created.failure.code} ${created.failure.message}`);
  return created.value;
}

export const FLEX_SANDBOX_PATHS = {
  entry: '/usr/local/bin/aks-flex-node',
  slotDir: '/usr/local/lib/aks-flex-node',
  blue: '/usr/local/lib/aks-flex-node/aks-flex-node-blue',
  green: '/usr/local/lib/aks-flex-node/aks-flex-node-green',
  current: '/usr/local/lib/aks-flex-node/aks-flex-node-current',
  lastGood: '/usr/local/lib/aks-flex-node/aks-flex-node-last-good',
  record: '/etc/aks-flex-node/agent-upgrade-signal.json',
  state: '/etc/aks-flex-node/agent-upgrade-state.json',
} as const;

/** A script agent that reports `version` and otherwise runs: the direct-path tests' candidates. */
export const scriptAgent = (version: string): string =>
  `#!/bin/sh\ncase "$1" in version) echo "aks-flex-node version v${version}";; *) exec sleep 30;; esac\n`;

export const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The health probe of the direct-path probe tests: over the agent's unix socket, two successes. */
export const SOCKET_PROBE: ProbeSettings = {
  target: { kind: 'unix-http', socket: '/run/aks-flex-node/health.sock', path: '/healthz' },
  periodMs: 1_000,
  timeoutMs: 1_000,
  successThreshold: 2,
  failureThreshold: 3,
};

/** The health gate of the direct-path health tests: 3 s of stability within 30 s, polled every 250 ms. */
export const GATE_TEST_HEALTH: UpgraderConfig['health'] = {
  ...FLEX_PROFILE.health,
  timeoutMs: 30_000,
  stableMs: 3_000,
  pollMs: 250,
};

/**
 * Writes the script candidate of `version` at `<root>/staging/<version>` (`at` maps a host path
 * into the sandbox) and tells the modelled unit how that binary behaves, by its digest.
 */
export function stageCandidate(
  at: (path: string) => string,
  behaviours: Map<string, AgentBehaviour>,
  version: string,
  behaviour: AgentBehaviour = 'healthy',
): string {
  writeExecutable(at(`/staging/${version}`), scriptAgent(version));
  behaviours.set(digestOf(scriptAgent(version)), behaviour);
  return at(`/staging/${version}`);
}

/**
 * The modelled unit over the sandbox's real files: it runs what `current` names, each binary as
 * `behaviours` says by its digest (healthy when not said), on `clock`.
 */
export function modelledServices(
  at: (path: string) => string,
  behaviours: ReadonlyMap<string, AgentBehaviour>,
  clock: ConstructorParameters<typeof MemoryServiceManager>[0]['clock'],
): MemoryServiceManager {
  return new MemoryServiceManager({
    fs: new NodeFileSystem(),
    execStart: at(FLEX_SANDBOX_PATHS.current),
    behaviourOf: (digest) => behaviours.get(digest) ?? 'healthy',
    clock,
  });
}

/** The modelled unit and the probe it answers, on a fresh memory clock: an upgrader's overrides. */
export function modelledPorts(
  at: (path: string) => string,
  behaviours: ReadonlyMap<string, AgentBehaviour>,
): { serviceManager: MemoryServiceManager; healthProbe: MemoryHealthProbe; clock: MemoryClock } {
  const clock = new MemoryClock();
  const serviceManager = modelledServices(at, behaviours, clock);
  return { serviceManager, healthProbe: new MemoryHealthProbe({ services: () => serviceManager }), clock };
}
