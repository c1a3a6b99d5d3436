import { fail, ok, type Result } from '../../common/failure.js';
import { basenamePath, dirnamePath, isCleanAbsolutePath, isPathInside, joinPath, rerootPath } from './posix-path.js';
import type { SlotName } from './slot.js';

/**
 * Every host path the upgrader touches (docs/operations.md#the-managed-layout), by role. All
 * absolute and clean; with a `--root` every one of them lies under that root.
 */
export interface SlotLayout {
  /** `/` in production; a sandbox directory under `--root`. */
  readonly root: string;
  /** Compatibility entry: after migration a symlink to the current link. */
  readonly entry: string;
  readonly slotDir: string;
  readonly blue: string;
  readonly green: string;
  readonly current: string;
  readonly lastGood: string;
  readonly recoveryScript: string;
  readonly record: string;
  /**
   * The direct path's activation marker, beside the record
   * (docs/protocol.md#interrupted-activation-marker).
   */
  readonly activation: string;
  /** The watch window of an upgrade on trial, beside the record (docs/protocol.md#watch-window). */
  readonly watch: string;
  readonly state: string;
  readonly lock: string;
  readonly daemonState: string;
  readonly unitDir: string;
  /**
   * Where a download is staged on a managed host: a private temp of the blue slot in the slot
   * directory, so the install is a rename and a crash leaves nothing the sweep would miss.
   */
  readonly downloadStaging: string;
  /**
   * Where `install` stages its download on a host not yet migrated (no slot directory yet): a
   * temp of the compatibility entry, beside it, swept like any temp of the entry.
   */
  readonly legacyDownloadStaging: string;
  /** The direct path's private copy of a candidate (`activate`), a temp of the blue slot. */
  readonly candidateSnapshot: string;
}

/** The roles that name a single file or link and must all be distinct. */
export const FILE_ROLES = [
  'entry',
  'blue',
  'green',
  'current',
  'lastGood',
  'recoveryScript',
  'record',
  'activation',
  'watch',
  'state',
  'lock',
] as const;
export type FileRole = (typeof FILE_ROLES)[number];

/** Every role that names a path, including directories. */
export const PATH_ROLES = [...FILE_ROLES, 'slotDir', 'daemonState', 'unitDir'] as const;
export type PathRole = (typeof PATH_ROLES)[number];

export interface LayoutSettings {
  readonly root: string;
  readonly agentName: string;
  readonly entry: string;
  readonly slotDir: string;
  readonly record: string;
  readonly state: string;
  readonly lock: string;
  readonly daemonState: string;
  readonly unitDir: string;
}

export const SLOT_DIR_MODE = 0o750;
export const BINARY_MODE = 0o755;
export const RECORD_MODE = 0o600;
/** The directory holding the record and the state file (`/etc/aks-flex-node`). */
export const STATE_DIRECTORY_MODE = 0o750;
export const RECOVERY_SCRIPT_MODE = 0o750;

/**
 * Derives the layout from settings: slot, link and script names come from the agent name, and
 * every path is re-rooted under `root`. Paths are validated before re-rooting, so a setting that
 * climbs out with `..` is refused rather than silently cleaned.
 */
export function deriveLayout(settings: LayoutSettings): Result<SlotLayout> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(settings.agentName)) {
    return fail('E_LAYOUT', 'agent.name must be 1-64 characters of letters, digits, ".", "_" or "-"');
  }
  if (!isCleanAbsolutePath(settings.root)) return fail('E_LAYOUT', 'root must be an absolute, clean path');
  const host = {
    entry: settings.entry,
    slotDir: settings.slotDir,
    record: settings.record,
    state: settings.state,
    lock: settings.lock,
    daemonState: settings.daemonState,
    unitDir: settings.unitDir,
  };
  for (const [role, path] of Object.entries(host)) {
    if (!isCleanAbsolutePath(path)) return fail('E_LAYOUT', `paths.${role} must be an absolute, clean path`);
    if (path === '/') return fail('E_LAYOUT', `paths.${role} must not be the root directory`);
  }
  const name = settings.agentName;
  const inRoot = (path: string): string => rerootPath(settings.root, path);
  const slotDir = inRoot(settings.slotDir);
  const entry = inRoot(settings.entry);
  const blue = joinPath(slotDir, `${name}-blue`);
  const layout: SlotLayout = {
    root: settings.root,
    entry,
    slotDir,
    blue,
    green: joinPath(slotDir, `${name}-green`),
    current: joinPath(slotDir, `${name}-current`),
    lastGood: joinPath(slotDir, `${name}-last-good`),
    recoveryScript: joinPath(slotDir, `${name}-recovery.sh`),
    record: inRoot(settings.record),
    activation: joinPath(dirnamePath(inRoot(settings.record)), `agent-upgrade-activation.json`),
    watch: joinPath(dirnamePath(inRoot(settings.record)), `agent-upgrade-watch.json`),
    state: inRoot(settings.state),
    lock: inRoot(settings.lock),
    daemonState: inRoot(settings.daemonState),
    unitDir: inRoot(settings.unitDir),
    downloadStaging: privateTempOf(blue, 'download'),
    legacyDownloadStaging: privateTempOf(entry, 'download'),
    candidateSnapshot: privateTempOf(blue, 'candidate'),
  };
  const problem = checkDistinct(layout, identity(layout));
  return problem === null ? ok(layout) : fail('E_LAYOUT', problem);
}

/**
 * A private temp beside `file`, named like the temps an atomic write of `file` leaves
 * (`.<name>.tmp-<purpose>`), so a crash that strands it leaves an entry the next sweep removes.
 */
function privateTempOf(file: string, purpose: string): string {
  return joinPath(dirnamePath(file), `.${basenamePath(file)}.tmp-${purpose}`);
}

export function slotPath(layout: SlotLayout, slot: SlotName): string {
  return slot === 'blue' ? layout.blue : layout.green;
}

/** Which slot a resolved real path is, given the slots' own canonical paths. */
export function slotAt(canonical: CanonicalPaths, realPath: string | null): SlotName | null {
  if (realPath === null) return null;
  if (realPath === canonical.blue) return 'blue';
  if (realPath === canonical.green) return 'green';
  return null;
}

/** Each role's path with its parent directory resolved through symlinks (last component kept). */
export type CanonicalPaths = Readonly<Record<PathRole, string>>;

export function identity(layout: SlotLayout): CanonicalPaths {
  const out = {} as Record<PathRole, string>;
  for (const role of PATH_ROLES) out[role] = layout[role];
  return out;
}

/**
 * Validates the layout against what the host shows: each role's canonical path (parent
 * directories resolved, observed by the app) must be distinct, so two roles that alias through
 * a symlinked directory are refused. With a sandbox root, every canonical path must stay inside
 * the root (itself resolved, so a root under a symlinked /tmp works), so a symlinked directory
 * cannot lead writes out of the sandbox.
 */
export function validateCanonicalLayout(
  layout: SlotLayout,
  canonical: CanonicalPaths,
  canonicalRoot: string = layout.root,
): Result<SlotLayout> {
  const problem = checkDistinct(layout, canonical);
  if (problem !== null) return fail('E_LAYOUT', problem);
  if (layout.root !== '/') {
    for (const role of PATH_ROLES) {
      if (!isPathInside(canonicalRoot, canonical[role])) {
        return fail('E_LAYOUT', `${roleLabel(role)} ${layout[role]} resolves outside the root ${layout.root}`);
      }
    }
  }
  return ok(layout);
}

function checkDistinct(layout: SlotLayout, canonical: CanonicalPaths): string | null {
  const seen = new Map<string, PathRole>();
  for (const role of PATH_ROLES) {
    const path = canonical[role];
    const earlier = seen.get(path);
    if (earlier !== undefined) {
      return `${roleLabel(role)} ${layout[role]} is the same path as ${roleLabel(earlier)} ${layout[earlier]}`;
    }
    seen.set(path, role);
  }
  // The unit directory belongs to the service manager: no layout file may live in it, or a
  // write would replace a unit.
  for (const role of FILE_ROLES) {
    if (isPathInside(canonical.unitDir, canonical[role])) {
      return `${roleLabel(role)} ${layout[role]} lies inside ${roleLabel('unitDir')} ${layout.unitDir}`;
    }
  }
  if (isPathInside(canonical.slotDir, canonical.unitDir) || isPathInside(canonical.unitDir, canonical.slotDir)) {
    return `${roleLabel('slotDir')} and ${roleLabel('unitDir')} must not contain each other`;
  }
  return null;
}

export function roleLabel(role: PathRole): string {
  switch (role) {
    case 'entry':
      return 'the compatibility entry';
    case 'slotDir':
      return 'the slot directory';
    case 'blue':
      return 'the blue slot';
    case 'green':
      return 'the green slot';
    case 'current':
      return 'the current link';
    case 'lastGood':
      return 'the last-good link';
    case 'recoveryScript':
      return 'the recovery script';
    case 'record':
      return 'the upgrade record';
    case 'activation':
      return 'the activation marker';
    case 'watch':
      return 'the watch window';
    case 'state':
      return 'the upgrade state file';
    case 'lock':
      return 'the host lock';
    case 'daemonState':
      return 'the daemon state file';
    case 'unitDir':
      return 'the unit directory';
  }
}
