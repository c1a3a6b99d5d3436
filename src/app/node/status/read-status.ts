import type { Sha256 } from '../../../domain/common/digest.js';
import { ok, type Failure, type Result } from '../../../domain/common/failure.js';
import {
  brokenSlotProblems,
  checkLayoutShape,
  checkTargetsInsideRoot,
  linkedSlot,
  type LayoutFacts,
  type PathFact,
} from '../../../domain/node/layout/host-facts.js';
import { planMigration } from '../../../domain/node/layout/migration-plan.js';
import { validateCanonicalLayout, type SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import { isUnsignedAccepted, type UpgradeState } from '../../../domain/node/record/upgrade-state.js';
import type { TrustSettings } from '../../../domain/common/trust/trust-settings.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ReleaseTrust, TrustedRole } from '../../../ports/common/release-trust.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { HostLock, LockHolder } from '../../../ports/node/host-lock.js';
import type { ServiceActivity, ServiceManager } from '../../../ports/node/service-manager.js';
import { canonicalRoot, observeLayout } from '../layout/observe-layout.js';
import type { RecordStore } from '../record/record-store.js';
import type { WatchStore } from '../record/watch-store.js';
import { watchStatusOf, type WatchStatus } from './watch-status.js';
import type { StateStore } from '../state/state-store.js';
import { translatePortError } from '../../common/translate-port-error.js';

export type LayoutCondition = 'managed' | 'needs-migration' | 'invalid';

export interface LinkStatus {
  readonly path: string;
  readonly text: string | null;
  readonly resolvesTo: string | null;
  readonly slot: SlotName | null;
}

export interface SlotStatus {
  readonly path: string;
  readonly present: boolean;
  readonly executable: boolean;
  readonly sha256: string | null;
  readonly bytes: number | null;
  /** The version the state file records for exactly these bytes (its digest equals `sha256`). */
  readonly version: string | null;
  /** Signed releases: these bytes were activated unsigned, by the operator's override (`activate --unsigned`). */
  readonly acceptedUnsigned: boolean;
  /** Only when the slot could not be digested (too large, unreadable, replaced while read). */
  readonly problem?: Failure;
}

export interface StatusReport {
  readonly root: string;
  readonly layout: {
    readonly condition: LayoutCondition;
    readonly problem: Failure | null;
    readonly pendingChanges: number;
  };
  readonly links: { readonly current: LinkStatus; readonly lastGood: LinkStatus; readonly entry: LinkStatus };
  readonly slots: { readonly blue: SlotStatus; readonly green: SlotStatus };
  /** Digests of binaries that failed, oldest first, from the state file (empty when it cannot be read). */
  readonly quarantine: readonly Sha256[];
  /** The never-downgrade mark from the state file; null before the first commit or when it cannot be read. */
  readonly highestCommittedVersion: string | null;
  readonly record:
    | { readonly present: false }
    | { readonly present: true; readonly valid: true; readonly record: UpgradeRecord }
    | { readonly present: true; readonly valid: false; readonly problem: Failure };
  /** An upgrade on trial in its watch window, if any. */
  readonly watch: WatchStatus;
  /** The upgrade state file; `problem` only when it cannot be read (`E_STATE`). */
  readonly state: { readonly path: string; readonly problem?: Failure };
  /** `problem` only when the holder could not be read (the lock path is not a usable file). */
  readonly lock: { readonly path: string; readonly holder: LockHolder | null; readonly problem?: Failure };
  /** `mainExecutable`: the real path the agent's main process runs, when one runs. */
  readonly service: {
    readonly manager: string;
    readonly activity: ServiceActivity;
    readonly mainExecutable: string | null;
  };
  /**
   * Signed releases: the repository and what this node verified of it (each role's version and
   * expiry; none before the first refresh). Null when releases are not signed.
   */
  readonly trust: {
    readonly mode: 'tuf';
    readonly metadataUrl: string;
    readonly targetsUrl: string;
    readonly roles: readonly TrustedRole[];
  } | null;
}

export interface StatusDependencies {
  readonly fs: FileSystem;
  readonly services: ServiceManager;
  readonly lock: HostLock;
  readonly layout: SlotLayout;
  readonly records: RecordStore;
  readonly watches: WatchStore;
  readonly states: StateStore;
  /** For the watch window's estimated end only. */
  readonly clock: Clock;
  readonly binaryMaxBytes: number;
  readonly trustSettings: TrustSettings;
  readonly trust: ReleaseTrust | null;
}

/**
 * Everything an operator needs to see, read without changing anything and without the lock.
 * What cannot be read (a record that is a FIFO or oversized, a slot too large to digest, a
 * lock file that is not a file) is reported with its code rather than failing the report.
 */
export async function readStatus(deps: StatusDependencies): Promise<StatusReport> {
  const { fs, layout } = deps;
  const facts = await observeLayout(fs, layout);
  const record = await portFailureAsResult(() => deps.records.read());
  const state = await portFailureAsResult(() => deps.states.read());
  const known = state.ok ? state.value : null;
  return {
    root: layout.root,
    layout: judgeLayout(layout, facts, await canonicalRoot(fs, layout)),
    links: {
      current: linkStatus(layout.current, facts.current, linkedSlot(facts, 'current')),
      lastGood: linkStatus(layout.lastGood, facts.lastGood, linkedSlot(facts, 'lastGood')),
      entry: linkStatus(layout.entry, facts.entry, null),
    },
    slots: {
      blue: await slotStatus(deps, { path: layout.blue, fact: facts.blue, known, slot: 'blue' }),
      green: await slotStatus(deps, { path: layout.green, fact: facts.green, known, slot: 'green' }),
    },
    quarantine: known?.quarantine ?? [],
    highestCommittedVersion: known?.highestCommittedVersion ?? null,
    record: !record.ok
      ? { present: true, valid: false, problem: record.failure }
      : record.value === null
        ? { present: false }
        : { present: true, valid: true, record: record.value },
    watch: watchStatusOf(await portFailureAsResult(() => deps.watches.read()), deps.clock.nowMs()),
    state: state.ok ? { path: layout.state } : { path: layout.state, problem: state.failure },
    lock: await lockStatus(deps),
    service: {
      manager: deps.services.name,
      activity: await deps.services.activity().catch(() => 'unknown' as const),
      mainExecutable: await deps.services.mainExecutable().catch(() => null),
    },
    trust: await trustStatus(deps),
  };
}

async function trustStatus({ trust, trustSettings }: StatusDependencies): Promise<StatusReport['trust']> {
  if (trust === null || trustSettings === null) return null;
  const { metadataUrl, targetsUrl } = trustSettings;
  return { mode: 'tuf', metadataUrl, targetsUrl, roles: await trust.trusted() };
}

function judgeLayout(layout: SlotLayout, facts: LayoutFacts, root: string): StatusReport['layout'] {
  const canonical = validateCanonicalLayout(layout, facts.canonical, root);
  if (!canonical.ok) return { condition: 'invalid', problem: canonical.failure, pendingChanges: 0 };
  const shape = checkLayoutShape(layout, facts);
  if (!shape.ok) return { condition: 'invalid', problem: shape.failure, pendingChanges: 0 };
  const [broken] = brokenSlotProblems(facts);
  if (broken !== undefined) return { condition: 'invalid', problem: broken, pendingChanges: 0 };
  const inside = checkTargetsInsideRoot(layout, facts, root);
  if (!inside.ok) return { condition: 'invalid', problem: inside.failure, pendingChanges: 0 };
  const plan = planMigration(layout, facts);
  if (!plan.ok) return { condition: 'invalid', problem: plan.failure, pendingChanges: 0 };
  const pending = plan.value.actions.length;
  return { condition: pending === 0 ? 'managed' : 'needs-migration', problem: null, pendingChanges: pending };
}

function linkStatus(path: string, fact: PathFact, slot: SlotName | null): LinkStatus {
  if (fact.kind !== 'symlink') return { path, text: null, resolvesTo: fact.kind === 'file' ? path : null, slot };
  const resolvesTo = fact.resolved.kind === 'file' || fact.resolved.kind === 'not-file' ? fact.resolved.path : null;
  return { path, text: fact.text, resolvesTo, slot };
}

/**
 * `known`: the state file (null when it cannot be read); what it says of the slot counts only for
 * the same bytes.
 */
async function slotStatus(
  deps: StatusDependencies,
  { path, fact, known, slot }: { path: string; fact: PathFact; known: UpgradeState | null; slot: SlotName },
): Promise<SlotStatus> {
  const unknown = { sha256: null, bytes: null, version: null, acceptedUnsigned: false };
  if (fact.kind !== 'file') return { path, present: fact.kind !== 'missing', executable: false, ...unknown };
  const digest = await portFailureAsResult(async () => ok(await deps.fs.hashFile(path, deps.binaryMaxBytes)));
  if (!digest.ok) return { path, present: true, executable: fact.executable, ...unknown, problem: digest.failure };
  const { sha256, bytes } = digest.value;
  const info = known?.slots[slot] ?? null;
  return {
    path,
    present: true,
    executable: fact.executable,
    sha256,
    bytes,
    version: info !== null && info.digest === sha256 ? info.version : null,
    acceptedUnsigned: known !== null && isUnsignedAccepted(known, sha256),
  };
}

async function lockStatus(deps: StatusDependencies): Promise<StatusReport['lock']> {
  const holder = await portFailureAsResult(async () => ok(await deps.lock.holder()));
  return holder.ok
    ? { path: deps.layout.lock, holder: holder.value }
    : { path: deps.layout.lock, holder: null, problem: holder.failure };
}

/** A port failure becomes a reported failure; anything else (a bug) still propagates. */
async function portFailureAsResult<T>(read: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await read();
  } catch (error) {
    const problem = translatePortError(error);
    if (problem === null) throw error;
    return { ok: false, failure: problem };
  }
}
