import type { Sha256 } from './digest.js';
import { fail, ok, type Result } from './failure.js';
import { linkedSlot, type LayoutFacts } from './host-facts.js';
import { planMigration, type LayoutAction } from './migration-plan.js';
import { slotPath, type SlotLayout } from './slot-layout.js';
import { otherSlot, type SlotName } from './slot.js';

/**
 * The activation plan of a candidate against observed host facts: what `--preflight` prints and
 * what the activation executes, step by step, in this order.
 */
export type ActivationStep =
  | { readonly kind: 'verify-candidate' }
  | { readonly kind: 'initialize-layout'; readonly actions: readonly LayoutAction[] }
  | { readonly kind: 'remove-stale-temps'; readonly paths: readonly string[] }
  | { readonly kind: 'point-last-good'; readonly slot: SlotName; readonly why: 'protect' | 'repair' }
  /** The durable marker an interrupted activation is resolved from: written before the slot changes. */
  | { readonly kind: 'mark-activation'; readonly previous: SlotName; readonly candidate: SlotName }
  | { readonly kind: 'install-candidate'; readonly slot: SlotName }
  | { readonly kind: 'switch-current'; readonly slot: SlotName }
  | { readonly kind: 'update-service-assets' }
  | { readonly kind: 'restart-service' }
  | { readonly kind: 'wait-healthy'; readonly slot: SlotName }
  | { readonly kind: 'sync-container'; readonly slot: SlotName };

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

export function planActivation(input: ActivationInput): Result<ActivationPlan> {
  const migration = planMigration(input.layout, input.facts);
  if (!migration.ok) return migration;
  const { actions, currentSlot: activeSlot } = migration.value;
  // Sweeping temps and re-pointing a broken last-good are repairs of a managed layout, shown as
  // their own steps; anything else means the host is not managed yet and is initialised first.
  const initializeLayout = actions.some((action) => !isRepair(action));
  const candidateChanged = input.candidateDigest !== input.activeDigest;
  const targetSlot = candidateChanged ? otherSlot(activeSlot) : activeSlot;

  const steps: ActivationStep[] = [{ kind: 'verify-candidate' }];
  let lastGood = initializeLayout ? migration.value.lastGoodSlot : linkedSlot(input.facts, 'lastGood');
  if (initializeLayout) steps.push({ kind: 'initialize-layout', actions });
  else {
    const stale = actions.flatMap((action) => (action.kind === 'remove-stale-temp' ? [action.path] : []));
    if (stale.length > 0) steps.push({ kind: 'remove-stale-temps', paths: stale });
    if (lastGood === null) {
      steps.push({ kind: 'point-last-good', slot: activeSlot, why: 'repair' });
      lastGood = activeSlot;
    }
  }
  if (candidateChanged) {
    // The slot about to be overwritten may be last-good's; re-point last-good at the running
    // binary before the write so no moment leaves last-good naming a half-replaced slot.
    if (lastGood === targetSlot) steps.push({ kind: 'point-last-good', slot: activeSlot, why: 'protect' });
    steps.push({ kind: 'mark-activation', previous: activeSlot, candidate: targetSlot });
    steps.push({ kind: 'install-candidate', slot: targetSlot });
    steps.push({ kind: 'switch-current', slot: targetSlot });
  }
  if (!input.serviceAssetsCurrent) steps.push({ kind: 'update-service-assets' });
  if (input.serviceActive) {
    steps.push({ kind: 'restart-service' });
    steps.push({ kind: 'wait-healthy', slot: targetSlot });
  }
  if (input.containerPresent) steps.push({ kind: 'sync-container', slot: targetSlot });
  // An identical candidate is already current (say, after a crash between a switch and its
  // rollback): if it proves unhealthy, last-good is where to go back to.
  const rollbackSlot = candidateChanged ? activeSlot : (lastGood ?? activeSlot);
  return ok({ initializeLayout, activeSlot, targetSlot, candidateChanged, rollbackSlot, steps });
}

function isRepair(action: LayoutAction): boolean {
  return action.kind === 'remove-stale-temp' || (action.kind === 'point-link' && action.role === 'lastGood');
}

/** The lines `--preflight` prints for each step (stable wording; JSON output carries the data). */
export function describeStep(layout: SlotLayout, step: ActivationStep): string {
  switch (step.kind) {
    case 'verify-candidate':
      return 'verify the candidate binary';
    case 'initialize-layout':
      return `initialise the managed layout (${step.actions.length} change${step.actions.length === 1 ? '' : 's'})`;
    case 'remove-stale-temps':
      return `remove ${step.paths.length} temp entr${step.paths.length === 1 ? 'y' : 'ies'} left by an interrupted write`;
    case 'point-last-good':
      return `${step.why} last-good: point ${layout.lastGood} at ${slotPath(layout, step.slot)}`;
    case 'mark-activation':
      return 'record the activation, so that an interrupted one is rolled back';
    case 'install-candidate':
      return `install the candidate into ${slotPath(layout, step.slot)}`;
    case 'switch-current':
      return `switch ${layout.current} to ${slotPath(layout, step.slot)}`;
    case 'update-service-assets':
      return 'update the service configuration and reload the service manager';
    case 'restart-service':
      return 'restart the agent service';
    case 'wait-healthy':
      return `wait until the agent runs ${slotPath(layout, step.slot)} and stays up`;
    case 'sync-container':
      return `copy ${slotPath(layout, step.slot)} into the active container`;
  }
}

/**
 * Refuses a rollback that would not go anywhere useful (docs/operations.md#rollback-and-recover).
 */
export function planRollback(facts: LayoutFacts): Result<{ readonly from: SlotName; readonly to: SlotName }> {
  const current = linkedSlot(facts, 'current');
  const lastGood = linkedSlot(facts, 'lastGood');
  if (current === null) return fail('E_LAYOUT', 'the current link does not resolve to a slot; run migrate first');
  if (lastGood === null) return fail('E_LAYOUT', 'the last-good link does not resolve to an executable slot');
  return ok({ from: current, to: lastGood });
}
