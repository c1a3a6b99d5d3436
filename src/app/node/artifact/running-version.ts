import type { SlotName } from '../../../domain/node/layout/slot.js';
import { committedVersion, recordedVersion, type UpgradeState } from '../../../domain/node/record/upgrade-state.js';
import type { Version } from '../../../domain/common/version.js';
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
  // Hash only when the state has a version to vouch for.
  const { slot } = input;
  const recorded =
    slot === null || input.state.slots[slot]?.version == null
      ? null
      : recordedVersion(input.state, slot, (await deps.fs.hashFile(path, input.maxBinaryBytes)).sha256);
  return recorded ?? (await probeVersion(deps, path)) ?? committedVersion(input.state);
}
