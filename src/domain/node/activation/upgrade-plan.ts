import {
  candidateChanges,
  lastGoodSteps,
  planSlotChange,
  type ActivationStep,
  type SlotChange,
} from './activation-steps.js';
import type { Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { describeBrokenSlot, isBrokenSlot, linkedSlot, namedSlot, type LayoutFacts } from '../layout/host-facts.js';
import { planMigration, type LayoutAction } from '../layout/migration-plan.js';
import type { SlotLayout } from '../layout/slot-layout.js';
import { otherSlot, type SlotName } from '../layout/slot.js';
import type { StepPlan } from './step-failure.js';

export { describeStep, type ActivationStep } from './activation-steps.js';

// The activation plans of both paths (docs/protocol.md#activation-steps): lists of the same
// steps, built from the same slot change, run by the same step loop, failing by the same table
// (`decideStepFailure`). What `--preflight` prints is the direct plan.

export interface ActivationInput {
  readonly layout: SlotLayout;
  readonly facts: LayoutFacts;
  readonly candidateDigest: Sha256;
  /**
   * Digest of the binary the agent runs now: what current resolves to, or — on a host that is
   * not yet managed — the file the layout will be seeded from.
   */
  readonly activeDigest: Sha256;
  readonly serviceAssetsCurrent: boolean;
  /** An inactive service (reset, rejoin, provisioning) is left stopped: no restart, no health. */
  readonly serviceActive: boolean;
  readonly containerPresent: boolean;
  /** `health.watchMs`: how long a changed candidate stays on trial after its gate; 0 for none. */
  readonly watchMs: number;
}

export interface ActivationPlan {
  readonly initializeLayout: boolean;
  readonly activeSlot: SlotName;
  readonly targetSlot: SlotName;
  /** False for an identical candidate (same SHA-256): it targets the current slot, installs nothing. */
  readonly candidateChanged: boolean;
  /** Where a failed activation returns: the active slot, or last-good's for an identical candidate. */
  readonly rollbackSlot: SlotName;
  readonly steps: readonly ActivationStep[];
}

/** The direct path (`activate`, `install`), planned on the host as observed after migration. */
export function planActivation(input: ActivationInput): Result<ActivationPlan> {
  const prepared = prepareLayout(input.layout, input.facts);
  if (!prepared.ok) return prepared;
  const { initializeLayout, activeSlot, lastGood } = prepared.value;
  const candidateChanged = candidateChanges(input.candidateDigest, input.activeDigest);
  const targetSlot = candidateChanged ? otherSlot(activeSlot) : activeSlot;
  if (isBrokenSlot(input.facts, targetSlot)) return fail('E_LAYOUT', describeBrokenSlot(input.facts, targetSlot));
  const change: SlotChange = { active: activeSlot, target: targetSlot, lastGood };
  const mark: ActivationStep = { kind: 'mark-activation', previous: activeSlot, candidate: targetSlot };
  const steps: ActivationStep[] = [
    { kind: 'verify-candidate' },
    ...prepared.value.steps,
    ...(candidateChanged ? planSlotChange(change, { beforeInstall: [mark] }) : lastGoodSteps(change)),
  ];
  if (!input.serviceAssetsCurrent) steps.push({ kind: 'update-service-assets' });
  if (input.serviceActive) {
    steps.push({ kind: 'restart-service' });
    steps.push({ kind: 'wait-healthy', slot: targetSlot });
    // Only a change is on trial: an identical candidate is what already ran.
    if (candidateChanged && input.watchMs > 0)
      steps.push({ kind: 'watch-candidate', slot: targetSlot, windowMs: input.watchMs });
  }
  if (input.containerPresent) steps.push({ kind: 'sync-container', slot: targetSlot });
  // An identical candidate is already current (say, after a crash between a switch and its
  // rollback): if it proves unhealthy, last-good is where to go back to.
  const rollbackSlot = candidateChanged ? activeSlot : (lastGood ?? activeSlot);
  return ok({ initializeLayout, activeSlot, targetSlot, candidateChanged, rollbackSlot, steps });
}

interface PreparedLayout {
  readonly initializeLayout: boolean;
  readonly activeSlot: SlotName;
  /** The slot last-good names once the layout steps ran, or null when a repair is still due. */
  readonly lastGood: SlotName | null;
  readonly steps: readonly ActivationStep[];
}

/**
 * Sweeping temps and re-pointing a broken last-good are repairs of a managed layout, shown as
 * their own steps; anything else means the host is not managed yet and is initialised first.
 */
function prepareLayout(layout: SlotLayout, facts: LayoutFacts): Result<PreparedLayout> {
  const migration = planMigration(layout, facts);
  if (!migration.ok) return migration;
  const { actions, currentSlot: activeSlot } = migration.value;
  if (actions.some((action) => !isRepair(action)))
    return ok({
      initializeLayout: true,
      activeSlot,
      lastGood: migration.value.lastGoodSlot,
      steps: [{ kind: 'initialize-layout', actions }],
    });
  const stale = actions.flatMap((action) => (action.kind === 'remove-stale-temp' ? [action.path] : []));
  return ok({
    initializeLayout: false,
    activeSlot,
    lastGood: linkedSlot(facts, 'lastGood'),
    steps: stale.length > 0 ? [{ kind: 'remove-stale-temps', paths: stale }] : [],
  });
}

function isRepair(action: LayoutAction): boolean {
  return action.kind === 'remove-stale-temp' || (action.kind === 'point-link' && action.role === 'lastGood');
}

/** A managed plan (docs/protocol.md#managed-path-rows-1-8): the record writes are its steps. */
export interface ManagedPlan extends StepPlan {
  /** The slot that ran when the upgrade began: the record's `previous`. */
  readonly activeSlot: SlotName;
  readonly candidateChanged: boolean;
}

/**
 * Rows 5–6 up to the verified candidate, on the layout as migrated: the candidate slot is the
 * inactive one. The managed path learns the candidate's bytes only from the download, so the
 * rest of its plan (`planManagedSwitch`) is made once they are verified.
 */
export function planManagedStaging(facts: LayoutFacts): Result<ManagedPlan> {
  const previous = linkedSlot(facts, 'current');
  if (previous === null) return fail('E_LAYOUT', 'the current link does not name a slot after migration');
  const candidate = otherSlot(previous);
  if (isBrokenSlot(facts, candidate)) return fail('E_LAYOUT', describeBrokenSlot(facts, candidate));
  return ok({
    activeSlot: previous,
    targetSlot: candidate,
    rollbackSlot: previous,
    candidateChanged: true,
    steps: [
      { kind: 'record-candidate', candidate, previous },
      { kind: 'download-candidate' },
      { kind: 'verify-candidate' },
    ],
  });
}

export interface ManagedSwitchInput {
  /** The host as observed once the candidate is verified: the links decide, temps are not swept. */
  readonly facts: LayoutFacts;
  /** The slot the record names as `previous`. */
  readonly previous: SlotName;
  readonly candidateDigest: Sha256;
  /** Digest of the binary in `previous`, the one that runs. */
  readonly activeDigest: Sha256;
  /**
   * Whether the active container's copy differs from the binary that runs. Consulted only for an
   * identical candidate: a changed one reaches the container through the startup gate (S4).
   */
  readonly containerDiffers: boolean;
}

/**
 * Rows 6–7 once the candidate is verified: the slot change with the record written after the
 * install (`record-digest`) and after the switch (`commit-switch`). An identical candidate
 * changes nothing (docs/protocol.md#identical-candidate): the staging file goes, a container
 * copy that differs is made equal (Complete promises I7), and Complete is recorded as the
 * outcome, without a switch or a restart.
 */
export function planManagedSwitch(input: ManagedSwitchInput): Result<ManagedPlan> {
  const active = linkedSlot(input.facts, 'current');
  if (active !== input.previous)
    return fail('E_LAYOUT', 'the current link no longer names the slot the upgrade started from');
  if (!candidateChanges(input.candidateDigest, input.activeDigest)) {
    const sync: ActivationStep[] = input.containerDiffers ? [{ kind: 'sync-container', slot: active }] : [];
    return ok({
      activeSlot: active,
      targetSlot: active,
      rollbackSlot: active,
      candidateChanged: false,
      steps: [{ kind: 'discard-staging' }, ...sync, { kind: 'record-completion' }],
    });
  }
  const candidate = otherSlot(active);
  const change: SlotChange = { active, target: candidate, lastGood: linkedSlot(input.facts, 'lastGood') };
  return ok({
    activeSlot: active,
    targetSlot: candidate,
    rollbackSlot: active,
    candidateChanged: true,
    steps: planSlotChange(change, {
      afterInstall: [{ kind: 'record-digest' }, { kind: 'discard-staging' }],
      afterSwitch: [{ kind: 'commit-switch' }],
    }),
  });
}

/**
 * Refuses a rollback that would not go anywhere useful (docs/operations.md#rollback-and-recover).
 * A current that names a slot holding no runnable binary (missing, a directory, a FIFO) is no
 * reason to refuse: going to last-good is what repairs it.
 */
export function planRollback(facts: LayoutFacts): Result<{ readonly from: SlotName; readonly to: SlotName }> {
  const current = namedSlot(facts, 'current');
  const lastGood = linkedSlot(facts, 'lastGood');
  if (current === null) return fail('E_LAYOUT', 'the current link does not name a slot; run migrate first');
  if (lastGood === null) return fail('E_LAYOUT', 'the last-good link does not resolve to an executable slot');
  return ok({ from: current, to: lastGood });
}
