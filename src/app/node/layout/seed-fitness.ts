import { executableTarget, slotFileExecutable, type LayoutFacts } from '../../../domain/node/layout/host-facts.js';
import type { SeedSource } from '../../../domain/node/layout/migration-plan.js';
import { slotPath, type SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import {
  committedVersion,
  isQuarantined,
  recordedVersion,
  type UpgradeState,
} from '../../../domain/node/record/upgrade-state.js';
import { compareVersions, type Version } from '../../../domain/common/version.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { StateStore } from '../state/state-store.js';

export interface SeedFitnessDependencies {
  readonly fs: FileSystem;
  readonly layout: SlotLayout;
  readonly states: StateStore;
  readonly binaryMaxBytes: number;
  /** Asks a binary for its version; absent, versions the state does not know are not judged. */
  readonly probeVersion?: ((path: string) => Promise<Version | null>) | undefined;
}

/**
 * Which binaries a repair of current must not pick (docs/operations.md#migrate): a
 * digest in the quarantine, or a version older than the highest committed one — the crasher
 * an upgrade rolled back from, or an old binary left in the other slot. Judged only when current
 * names no slot, so the ordinary migration of a managed host reads nothing extra.
 */
export async function unfitSeeds(deps: SeedFitnessDependencies, facts: LayoutFacts): Promise<ReadonlySet<SeedSource>> {
  const read = await deps.states.read();
  // An unreadable state file vouches for nothing, and refuses nothing either.
  if (!read.ok) return new Set();
  const state = read.value;
  const sources: [SeedSource, string | null][] = [
    ['outside', executableTarget(facts.current, deps.layout.current)],
    ['blue', slotFileExecutable(facts, 'blue') ? slotPath(deps.layout, 'blue') : null],
    ['green', slotFileExecutable(facts, 'green') ? slotPath(deps.layout, 'green') : null],
    ['entry', executableTarget(facts.entry, deps.layout.entry)],
  ];
  const unfit = new Set<SeedSource>();
  for (const [source, path] of sources) {
    if (path !== null && !(await isFit(deps, state, source, path))) unfit.add(source);
  }
  return unfit;
}

async function isFit(
  deps: SeedFitnessDependencies,
  state: UpgradeState,
  source: SeedSource,
  path: string,
): Promise<boolean> {
  const digest = (await deps.fs.hashFile(path, deps.binaryMaxBytes)).sha256;
  if (isQuarantined(state, digest)) return false;
  const floor = committedVersion(state);
  if (floor === null) return true;
  const recorded = source === 'blue' || source === 'green' ? recordedVersion(state, source, digest) : null;
  const version = recorded ?? (await deps.probeVersion?.(path));
  // A binary that does not say its version is not judged older: it may be the only one left.
  return version === undefined || version === null || compareVersions(version, floor) >= 0;
}
