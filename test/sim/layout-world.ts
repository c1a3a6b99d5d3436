import { createHash } from 'node:crypto';
import { NoContainerRootfs } from '../../src/adapters/none/no-container-rootfs.js';
import { NoServiceManager } from '../../src/adapters/none/none-service-manager.js';
import { MemoryClock } from '../../src/adapters/memory/memory-clock.js';
import {
  MemoryFileSystem,
  type RebootMode,
  type Snapshot,
  type TreeSpec,
} from '../../src/adapters/memory/memory-file-system.js';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/memory/memory-process-runner.js';
import type { ActivationReport } from '../../src/app/activation/activation-report.js';
import type { RollbackOutcome } from '../../src/app/activation/rollback-to-last-good.js';
import { FLEX_PROFILE, type UpgraderConfig } from '../../src/app/config/upgrader-config.js';
import type { MigrationReport } from '../../src/app/layout/layout-engine.js';
import type { Upgrader } from '../../src/app/upgrader.js';
import { LazyArtifactSource } from '../../src/adapters/http/lazy-artifact-source.js';
import { MemoryHostLock } from '../../src/adapters/memory/memory-host-lock.js';
import { NoOperationStore } from '../../src/adapters/none/no-operation-store.js';
import { InvariantViolation } from '../../src/domain/invariant.js';
import { resolveLinkTarget } from '../../src/domain/posix-path.js';
import { deriveLayout, type SlotLayout } from '../../src/domain/slot-layout.js';
import { parseRecord } from '../../src/domain/upgrade-record.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { orThrow, simProcess } from './sim-process.js';

export const LAYOUT: SlotLayout = (() => {
  const derived = deriveLayout({ root: '/', agentName: FLEX_PROFILE.agent.name, ...FLEX_PROFILE.paths });
  if (!derived.ok) throw new Error(derived.failure.message);
  return derived.value;
})();

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

export function guardActiveSlot(fs: MemoryFileSystem): void {
  fs.beforeMutation((op) => {
    if (op.op !== 'rename' && op.op !== 'unlink') return;
    // Only the two slot paths can be the active slot: the tree is resolved for those ops alone.
    if (op.path !== LAYOUT.blue && op.path !== LAYOUT.green) return;
    const active = activeSlotPath(fs.snapshot());
    if (active !== null && op.path === active)
      throw new InvariantViolation(`I3: ${op.op} of the active slot ${op.path}`);
  });
}

export function reboot(fs: MemoryFileSystem, mode: RebootMode): MemoryFileSystem {
  const next = fs.reboot(mode);
  guardActiveSlot(next);
  return next;
}

/** Follows symlinks in a snapshot (relative or absolute text), bounded against loops. */
export function resolveInSnapshot(snapshot: Snapshot, path: string): string | null {
  let at = path;
  for (let hop = 0; hop < 16; hop += 1) {
    const entry = snapshot[at];
    if (entry === undefined) return null;
    if (entry.kind !== 'symlink') return at;
    at = resolveLinkTarget(at, entry.target);
  }
  return null;
}

function activeSlotPath(snapshot: Snapshot): string | null {
  const resolved = resolveInSnapshot(snapshot, LAYOUT.current);
  return resolved === LAYOUT.blue || resolved === LAYOUT.green ? resolved : null;
}

/**
 * I1 (the agent always has a runnable binary with a known digest) and I4 (the record parses or
 * is absent), checked on a snapshot. Before migration completes the agent still starts from the
 * compatibility entry, so that path counts while current does not resolve.
 */
export function checkHostInvariants(snapshot: Snapshot, knownDigests: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const viaCurrent = resolveInSnapshot(snapshot, LAYOUT.current);
  const binary = viaCurrent ?? resolveInSnapshot(snapshot, LAYOUT.entry);
  const entry = binary === null ? undefined : snapshot[binary];
  if (entry === undefined || entry.kind !== 'file') problems.push('I1: no runnable agent binary');
  else {
    if ((entry.mode & 0o111) === 0) problems.push(`I1: ${binary ?? ''} is not executable`);
    if (!knownDigests.has(entry.sha256)) problems.push(`I1: ${binary ?? ''} has an unknown digest (torn or empty)`);
  }
  const record = snapshot[LAYOUT.record];
  if (record !== undefined && record.kind !== 'file') problems.push('I4: the record is not a file');
  return problems;
}

/** I4 needs the content: the record must parse whenever it exists. */
export async function checkRecordParses(fs: MemoryFileSystem): Promise<string[]> {
  const bytes = await fs.readFile(LAYOUT.record, 64 * 1024);
  if (bytes === null) return [];
  return parseRecord(new TextDecoder().decode(bytes)).ok ? [] : ['I4: the record does not parse'];
}

/** Temp entries left anywhere in the snapshot. */
export function tempEntries(snapshot: Snapshot): string[] {
  return Object.keys(snapshot).filter((path) => /\/\.[^/]+\.tmp-[^/]*$/.test(path));
}
