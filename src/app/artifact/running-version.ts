import type { SlotName } from '../../domain/slot.js';
import { committedVersion, type UpgradeState } from '../../domain/upgrade-state.js';
import { parseVersion, type Version } from '../../domain/version.js';
import { probeVersion, type CandidateCheckDependencies } from './check-candidate.js';

/**
 * The version the active slot runs, for the never-downgrade rule: the state file's entry when it
 * describes the very bytes in the slot (a lost or stale state write cannot vouch for a binary
 * it never saw), otherwise what the binary itself reports, otherwise the highest committed
 * version. Null only on a host that never committed an upgrade and whose binary says nothing.
 */
export async function activeVersion(
  deps: CandidateCheckDependencies,
  input: {
    readonly state: UpgradeState;
    /** The slot current names, or null on a host not yet managed. */
    readonly slot: SlotName | null;
    /** The binary the agent runs: the slot's, or the legacy file's. */
    readonly path: string | null;
    readonly maxBinaryBytes: number;
  },
): Promise<Version | null> {
  const { path } = input;
  if (path === null) return committedVersion(input.state);
  const info = input.slot === null ? null : input.state.slots[input.slot];
  if (info?.version != null && (await deps.fs.hashFile(path, input.maxBinaryBytes)).sha256 === info.digest) {
    const parsed = parseVersion(info.version);
    if (parsed.ok) return parsed.value;
  }
  return (await probeVersion(deps, path)) ?? committedVersion(input.state);
}
