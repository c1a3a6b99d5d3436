import { createHash } from 'node:crypto';
import { NoContainerRootfs } from '../../src/adapters/node/none/no-container-rootfs.js';
import { NoServiceManager } from '../../src/adapters/node/none/none-service-manager.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryFileSystem, type RebootMode, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/node/memory/memory-process-runner.js';
import type { ActivationReport } from '../../src/app/node/activation/activation-report.js';
import type { RollbackOutcome } from '../../src/app/node/activation/rollback-to-last-good.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { MigrationReport } from '../../src/app/node/layout/layout-engine.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { LazyArtifactSource } from '../../src/adapters/common/http/lazy-artifact-source.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { NoOperationStore } from '../../src/adapters/node/none/no-operation-store.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { guardActiveSlot } from './active-slot-guard.js';
import { LAYOUT } from './host-invariants.js';
import { orThrow, simProcess } from './sim-process.js';

export { LAYOUT };

export const BINARY_MAX_BYTES = 1024 * 1024;

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const LAYOUT_CONFIG: UpgraderConfig = {
  ...FLEX_PROFILE,
  agent: { ...FLEX_PROFILE.agent, allowScripts: true },
  artifact: { ...FLEX_PROFILE.artifact, maxBinaryBytes: BINARY_MAX_BYTES },
  service: { ...FLEX_PROFILE.service, manager: 'none' },
  container: { ...FLEX_PROFILE.container, manager: 'none' },
};

/**
 * A freshly started `agent-upgrade` process over `fs`, composed as production composes it, with
 * no service manager (nothing to restart or judge) and no container: the layout is all its
 * commands change besides the marker and the state file. `candidate` answers `version`.
 */
function processOver(fs: MemoryFileSystem, candidate?: { readonly path: string; readonly version: string }): Upgrader {
  const runner = new MemoryProcessRunner();
  if (candidate !== undefined) runner.setBehaviour(candidate.path, versionOutcome(candidate.version));
  const ports = {
    fileSystem: fs,
    clock: new MemoryClock(),
    hostLock: new MemoryHostLock(),
    serviceManager: new NoServiceManager(),
    containerRootfs: new NoContainerRootfs(),
    processRunner: runner,
    artifactSource: new LazyArtifactSource(),
    operationStore: new NoOperationStore(),
  };
  return simProcess(ports, LAYOUT_CONFIG, new RecordingLogger());
}

/** `agent-upgrade migrate`; a failure is thrown as the process has it. */
export async function migrateOver(fs: MemoryFileSystem): Promise<MigrationReport> {
  return orThrow(await processOver(fs).migrate());
}

/** `agent-upgrade rollback`; a failure is thrown as the process has it. */
export async function rollbackOver(fs: MemoryFileSystem): Promise<RollbackOutcome> {
  return orThrow(await processOver(fs).rollback());
}

/**
 * `agent-upgrade activate CANDIDATE` — the path production runs: the candidate checks, the
 * migration, the snapshot, then the step loop over the plan's layout steps (and its marker),
 * then the verdict. A failure is thrown as the process has it.
 */
export async function activateOver(
  fs: MemoryFileSystem,
  candidate: { readonly path: string; readonly version: string },
): Promise<ActivationReport> {
  return orThrow(await processOver(fs, candidate).activate({ candidatePath: candidate.path }));
}

/**
 * A memory host whose hook enforces I3 as it happens: no op may replace or unlink the slot that
 * current names at that moment.
 */
export function hostFromTree(tree: TreeSpec): MemoryFileSystem {
  const fs = MemoryFileSystem.fromTree(tree);
  guardActiveSlot(fs);
  return fs;
}

export function reboot(fs: MemoryFileSystem, mode: RebootMode): MemoryFileSystem {
  const next = fs.reboot(mode);
  guardActiveSlot(next);
  return next;
}
