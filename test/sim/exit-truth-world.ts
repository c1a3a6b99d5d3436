/**
 * The world of the exit-truth tests: the direct path's fault classes, enumerated over the
 * production composition (`createUpgrader`) with memory ports (exit-truth-host-faults.test.ts,
 * exit-truth-interrupted.test.ts):
 * - exit codes tell whether the host changed: one filesystem fault at every mutating op of every
 *   mutating command; a failure that claims nothing changed must leave the material host (links,
 *   slots, record, state, marker, container copy) as it was, and one that says it changed
 *   (`hostChanged`, exit 5) must have changed it;
 * - a signal at every point of an activation;
 * - an unusable lock path (FIFO, symlink, not a regular file);
 * - a supervisor killed under its running agent.
 */
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type Snapshot, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryHostLock, type LockPathFault } from '../../src/adapters/node/memory/memory-host-lock.js';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/node/memory/memory-process-runner.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import type { Result } from '../../src/domain/common/failure.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { tempEntries } from './host-invariants.js';
import { agentScript, CONFIG, LAYOUT } from './managed-world.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';

export const CANDIDATE = '/var/tmp/aks-flex-node-candidate';
const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';
export const exe = (text: string) => ({ file: text, mode: 0o755 });
export const MANAGED: TreeSpec = {
  [LAYOUT.blue]: exe(agentScript('1.0.0')),
  [LAYOUT.green]: exe(agentScript('0.9.0')),
  [LAYOUT.current]: { symlink: 'aks-flex-node-blue' },
  [LAYOUT.lastGood]: { symlink: 'aks-flex-node-green' },
  [LAYOUT.entry]: { symlink: '../lib/aks-flex-node/aks-flex-node-current' },
  [CONTAINER_COPY]: exe(agentScript('1.0.0')),
  [CANDIDATE]: exe(agentScript('2.0.0')),
};
const LEGACY: TreeSpec = {
  [LAYOUT.entry]: exe(agentScript('1.0.0')),
  [CONTAINER_COPY]: exe(agentScript('1.0.0')),
  [CANDIDATE]: exe(agentScript('2.0.0')),
};

export interface Scenario {
  readonly tree: TreeSpec;
  readonly behaviour: AgentBehaviour;
  readonly run: (upgrader: Upgrader) => Promise<Result<unknown>>;
}

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'migrate a legacy host': { tree: LEGACY, behaviour: 'healthy', run: (upgrader) => upgrader.migrate() },
  'activate a healthy candidate': {
    tree: MANAGED,
    behaviour: 'healthy',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'activate a candidate that crashes after start': {
    tree: MANAGED,
    behaviour: 'crash-after-start',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'activate on a legacy host': {
    tree: LEGACY,
    behaviour: 'healthy',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'rollback to last-good': { tree: MANAGED, behaviour: 'healthy', run: (upgrader) => upgrader.rollback() },
};

/** One host built as production builds it, with memory ports; the agent runs at boot. */
export async function boot(
  scenario: Scenario,
  lockFault: LockPathFault | null = null,
  config: UpgraderConfig = CONFIG,
): Promise<{ fs: MemoryFileSystem; upgrader: Upgrader; services: MemoryServiceManager }> {
  const fs = MemoryFileSystem.fromTree(scenario.tree);
  const clock = new MemoryClock();
  const candidateDigest = await fs.hashFile(CANDIDATE, 1 << 20);
  const services = new MemoryServiceManager({
    fs,
    execStart: LAYOUT.current,
    legacyExecStart: LAYOUT.entry,
    behaviourOf: (digest) => (digest === candidateDigest.sha256 ? scenario.behaviour : 'healthy'),
  });
  await services.restart();
  const runner = new MemoryProcessRunner();
  runner.setBehaviour(CANDIDATE, versionOutcome('2.0.0'));
  const lock = new MemoryHostLock();
  lock.setPathFault(lockFault);
  const container = new MemoryContainerRootfs({
    fs,
    machinesDir: '/var/lib/machines',
    binaryPath: '/usr/local/bin/aks-flex-node',
    activeMachine: () => 'kube1',
    maxBytes: 1 << 20,
  });
  const built = createUpgrader({
    config,
    identity: { euid: 0, arch: 'amd64', pid: 4242, command: 'agent-upgrade' },
    logger: new RecordingLogger(),
    overrides: {
      fileSystem: fs,
      clock,
      serviceManager: services,
      processRunner: runner,
      containerRootfs: container,
      hostLock: lock,
    },
  });
  if (!built.ok) throw new Error(built.failure.message);
  return { fs, upgrader: built.value, services };
}

/** The slot a link names in a snapshot (its stored text), or null. */
export function linkText(snapshot: Snapshot, path: string): string | null {
  const entry = snapshot[path];
  return entry?.kind === 'symlink' ? entry.target : null;
}

/** What a command may change, temps aside (a failed write may leave one; the next run sweeps it). */
export function material(snapshot: Snapshot): string {
  const temps = new Set(tempEntries(snapshot));
  return JSON.stringify(
    Object.entries(snapshot).filter(
      ([path]) => !temps.has(path) && path !== CANDIDATE && !path.startsWith('/var/tmp/.'),
    ),
  );
}

/**
 * Whether a use case ended as its CLI exits 0 or 3: done, or an activation that failed and was
 * rolled back (a failure that carries its `activation`, exit 3: "rolled back", whatever the
 * record and quarantine now hold). Every other failure claims, through `hostChanged`, whether the
 * host changed.
 */
export function endedWithoutClaim(result: Result<unknown>): boolean {
  if (result.ok) return true;
  const activation = (result as { activation?: { outcome?: string } | null }).activation;
  return activation?.outcome === 'rolled-back';
}
