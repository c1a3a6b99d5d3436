import type { MemoryFileSystem, Snapshot } from '../../src/adapters/node/memory/memory-file-system.js';
import { resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import { deriveLayout, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import { parseRecord } from '../../src/domain/node/record/upgrade-record.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';

/**
 * The checkers of the node simulations' hosts (docs/protocol.md#invariants-i1i12) that read a
 * snapshot of the file system, kept apart from the worlds that produce the snapshots: each
 * returns the problems it finds, empty when the invariant holds.
 */

/** The reference agent's layout under `/`, as every node simulation lays it out. */
export const LAYOUT: SlotLayout = (() => {
  const derived = deriveLayout({ root: '/', agentName: FLEX_PROFILE.agent.name, ...FLEX_PROFILE.paths });
  if (!derived.ok) throw new Error(derived.failure.message);
  return derived.value;
})();

/** Link hops followed before a path counts as a loop (the kernel's own bound is 40). */
const LINK_HOPS_MAX = 16;

/** Follows symlinks in a snapshot (relative or absolute text), bounded against loops. */
export function resolveInSnapshot(snapshot: Snapshot, path: string): string | null {
  let at = path;
  for (let hop = 0; hop < LINK_HOPS_MAX; hop += 1) {
    const entry = snapshot[at];
    if (entry === undefined) return null;
    if (entry.kind !== 'symlink') return at;
    at = resolveLinkTarget(at, entry.target);
  }
  return null;
}

/** The slot current names, or null when it names neither slot. */
export function activeSlotPath(snapshot: Snapshot): string | null {
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

/** The record is read whole; a real one is a few hundred bytes. */
const RECORD_BYTES_MAX = 64 * 1024;

/** I4 needs the content: the record must parse whenever it exists. */
export async function checkRecordParses(fs: MemoryFileSystem): Promise<string[]> {
  const bytes = await fs.readFile(LAYOUT.record, RECORD_BYTES_MAX);
  if (bytes === null) return [];
  return parseRecord(new TextDecoder().decode(bytes)).ok ? [] : ['I4: the record does not parse'];
}

/** Temp entries left anywhere in the snapshot. */
export function tempEntries(snapshot: Snapshot): string[] {
  return Object.keys(snapshot).filter((path) => /\/\.[^/]+\.tmp-[^/]*$/.test(path));
}
