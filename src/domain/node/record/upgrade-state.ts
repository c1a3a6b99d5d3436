import { isSha256, type Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { invariant } from '../../common/invariant.js';
import type { SlotName } from '../layout/slot.js';
import { checkExactKeys, isPlainObject, parseEnvelope } from './json-envelope.js';
import { compareVersions, parseVersion, type Version } from '../../common/version.js';

/**
 * The durable upgrade state file (docs/protocol.md#state-file-updates): what is known about each
 * slot's binary, the digests of binaries that failed (quarantine, bounded, oldest first) and the
 * highest version ever committed (the never-downgrade mark). It is advisory: every decision
 * re-observes links and processes, so a lost update never breaks recovery. Like the upgrade
 * record, an unknown kind or schema version, or any field of the wrong shape, is an error
 * (`E_STATE`), never guessed at.
 */
export const UPGRADE_STATE_KIND = 'AgentUpgradeState';
export const UPGRADE_STATE_SCHEMA_VERSION = 1;
export const STATE_TEXT_MAX_BYTES = 64 * 1024;
export const QUARANTINE_MAX = 16;

export interface SlotInfo {
  readonly digest: Sha256;
  /** Version text as the binary printed it (trimmed), accepted by `parseVersion`; null if unknown. */
  readonly version: string | null;
}

export interface UpgradeState {
  readonly kind: typeof UPGRADE_STATE_KIND;
  readonly schemaVersion: typeof UPGRADE_STATE_SCHEMA_VERSION;
  readonly slots: { readonly blue: SlotInfo | null; readonly green: SlotInfo | null };
  /** Digests of binaries that failed, oldest first, no duplicates, at most `QUARANTINE_MAX`. */
  readonly quarantine: readonly Sha256[];
  /** The highest version ever committed, by semver precedence; null before the first commit. */
  readonly highestCommittedVersion: string | null;
  /**
   * Signed releases: digests an operator activated unsigned (`activate --unsigned`), oldest first,
   * at most `QUARANTINE_MAX`, so `status` can say which slot holds one. Absent when empty: a state
   * file without overrides is the same as before signed releases.
   */
  readonly unsignedAccepted?: readonly Sha256[];
}

export function emptyUpgradeState(): UpgradeState {
  return {
    kind: UPGRADE_STATE_KIND,
    schemaVersion: UPGRADE_STATE_SCHEMA_VERSION,
    slots: { blue: null, green: null },
    quarantine: [],
    highestCommittedVersion: null,
  };
}

/** True for version text the state file may hold: already trimmed and accepted by `parseVersion`. */
export function isStoredVersionText(value: unknown): value is string {
  return typeof value === 'string' && value === value.trim() && parseVersion(value).ok;
}

/**
 * Records (or, with null, forgets) what a slot holds. The version must be text `parseVersion`
 * accepts; callers validate it first, so anything else is a programming error.
 */
export function withSlotInfo(state: UpgradeState, slot: SlotName, info: SlotInfo | null): UpgradeState {
  let stored: SlotInfo | null = null;
  if (info !== null) {
    invariant(isSha256(info.digest), 'slot digest must be a canonical SHA-256 digest');
    const version = info.version === null ? null : info.version.trim();
    invariant(version === null || isStoredVersionText(version), 'slot version must be a valid version');
    stored = { digest: info.digest, version };
  }
  return { ...state, slots: { ...state.slots, [slot]: stored } };
}

/**
 * Adds a failed binary's digest to the quarantine. Idempotent (a digest already present keeps
 * its place); when the list is full the oldest entries are dropped first.
 */
export function withQuarantined(state: UpgradeState, digest: Sha256): UpgradeState {
  invariant(isSha256(digest), 'a quarantined digest must be a canonical SHA-256 digest');
  if (state.quarantine.includes(digest)) return state;
  const quarantine = [...state.quarantine, digest];
  return { ...state, quarantine: quarantine.slice(Math.max(0, quarantine.length - QUARANTINE_MAX)) };
}

export function isQuarantined(state: UpgradeState, digest: Sha256): boolean {
  return state.quarantine.includes(digest);
}

/** Remembers that the operator accepted this binary unsigned; bounded like the quarantine. */
export function withUnsignedAccepted(state: UpgradeState, digest: Sha256): UpgradeState {
  invariant(isSha256(digest), 'an accepted unsigned digest must be a canonical SHA-256 digest');
  const accepted = state.unsignedAccepted ?? [];
  if (accepted.includes(digest)) return state;
  const next = [...accepted, digest];
  return { ...state, unsignedAccepted: next.slice(Math.max(0, next.length - QUARANTINE_MAX)) };
}

/** The same bytes installed again from a signed release are signed after all. */
export function withSignedBinary(state: UpgradeState, digest: Sha256): UpgradeState {
  const accepted = state.unsignedAccepted ?? [];
  if (!accepted.includes(digest)) return state;
  const { unsignedAccepted: _dropped, ...rest } = state;
  const remaining = accepted.filter((entry) => entry !== digest);
  return remaining.length === 0 ? rest : { ...rest, unsignedAccepted: remaining };
}

export function isUnsignedAccepted(state: UpgradeState, digest: Sha256): boolean {
  return (state.unsignedAccepted ?? []).includes(digest);
}

/**
 * Raises the never-downgrade mark to `versionText` when it is higher by semver precedence. The
 * mark never goes down, and a version of equal precedence leaves it unchanged.
 */
export function withCommittedVersion(state: UpgradeState, versionText: string): UpgradeState {
  const text = versionText.trim();
  const next = parseVersion(text);
  invariant(next.ok, 'a committed version must be a valid version');
  const current = committedVersion(state);
  if (current !== null && compareVersions(next.value, current) <= 0) return state;
  return { ...state, highestCommittedVersion: text };
}

/**
 * The version the state records for `slot`, trusted only while the state describes `digest`,
 * the bytes in the slot now: a lost or stale state write cannot vouch for a binary it never saw.
 */
export function recordedVersion(state: UpgradeState, slot: SlotName, digest: Sha256): Version | null {
  const info = state.slots[slot];
  if (info === null || info.digest !== digest || info.version === null) return null;
  const parsed = parseVersion(info.version);
  return parsed.ok ? parsed.value : null;
}

/** The parsed never-downgrade mark, or null before the first commit. */
export function committedVersion(state: UpgradeState): Version | null {
  if (state.highestCommittedVersion === null) return null;
  const parsed = parseVersion(state.highestCommittedVersion);
  invariant(parsed.ok, 'the stored committed version is valid');
  return parsed.value;
}

/** Canonical serialisation: fixed key order, two-space indentation, one trailing newline. */
export function serializeUpgradeState(state: UpgradeState): string {
  const slot = (info: SlotInfo | null) => (info === null ? null : { digest: info.digest, version: info.version });
  const canonical = {
    kind: state.kind,
    schemaVersion: state.schemaVersion,
    slots: { blue: slot(state.slots.blue), green: slot(state.slots.green) },
    quarantine: [...state.quarantine],
    highestCommittedVersion: state.highestCommittedVersion,
    ...(state.unsignedAccepted === undefined ? {} : { unsignedAccepted: [...state.unsignedAccepted] }),
  };
  return `${JSON.stringify(canonical, null, 2)}\n`;
}

/** Strict parse: every key present with the right type, nothing unknown. Errors are `E_STATE`. */
export function parseUpgradeState(text: string): Result<UpgradeState> {
  const envelope = parseEnvelope(text, {
    what: 'the upgrade state',
    where: 'state',
    code: 'E_STATE',
    kind: UPGRADE_STATE_KIND,
    schemaVersion: UPGRADE_STATE_SCHEMA_VERSION,
    maxLength: STATE_TEXT_MAX_BYTES,
    keys: STATE_KEYS,
    optionalKeys: ['unsignedAccepted'],
  });
  if (!envelope.ok) return envelope;
  const value = envelope.value;
  const problem = checkShape(value);
  if (problem !== null) return fail('E_STATE', problem);
  const slots = value.slots as Record<string, unknown>;
  return ok({
    kind: UPGRADE_STATE_KIND,
    schemaVersion: UPGRADE_STATE_SCHEMA_VERSION,
    slots: { blue: slots.blue as SlotInfo | null, green: slots.green as SlotInfo | null },
    quarantine: value.quarantine as Sha256[],
    highestCommittedVersion: value.highestCommittedVersion as string | null,
    ...(value.unsignedAccepted === undefined ? {} : { unsignedAccepted: value.unsignedAccepted as Sha256[] }),
  });
}

const STATE_KEYS = ['kind', 'schemaVersion', 'slots', 'quarantine', 'highestCommittedVersion'] as const;

function checkShape(value: Record<string, unknown>): string | null {
  const slots = value.slots;
  if (!isPlainObject(slots)) return 'state.slots must be an object';
  const slotKeys = checkExactKeys(slots, ['blue', 'green'], 'state.slots');
  if (slotKeys !== null) return slotKeys;
  for (const name of ['blue', 'green'] as const) {
    const info = slots[name];
    if (info === null) continue;
    const where = `state.slots.${name}`;
    if (!isPlainObject(info)) return `${where} must be an object or null`;
    const infoKeys = checkExactKeys(info, ['digest', 'version'], where);
    if (infoKeys !== null) return infoKeys;
    if (!isSha256(info.digest)) return `${where}.digest must be a SHA-256 digest`;
    if (info.version !== null && !isStoredVersionText(info.version))
      return `${where}.version must be a version or null`;
  }
  const quarantine = digestListProblem(value.quarantine, 'state.quarantine', { mayBeEmpty: true });
  if (quarantine !== null) return quarantine;
  const mark = value.highestCommittedVersion;
  if (mark !== null && !isStoredVersionText(mark)) return 'state.highestCommittedVersion must be a version or null';
  // Written only when it holds a digest, so an empty one is not a file this code wrote.
  return value.unsignedAccepted === undefined
    ? null
    : digestListProblem(value.unsignedAccepted, 'state.unsignedAccepted', { mayBeEmpty: false });
}

/** A list of distinct digests, at most `QUARANTINE_MAX`; the problem, or null. */
function digestListProblem(list: unknown, where: string, { mayBeEmpty }: { mayBeEmpty: boolean }): string | null {
  if (!Array.isArray(list)) return `${where} must be an array`;
  if (list.length === 0 && !mayBeEmpty) return `${where} must not be empty`;
  if (list.length > QUARANTINE_MAX) return `${where} holds more than ${QUARANTINE_MAX} digests`;
  if (!list.every((digest) => isSha256(digest))) return `${where} must hold SHA-256 digests`;
  if (new Set(list).size !== list.length) return `${where} holds a digest twice`;
  return null;
}
