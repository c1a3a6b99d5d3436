import type { Sha256 } from '../../common/digest.js';
import type { LayoutAction } from '../layout/migration-plan.js';
import { slotPath, type SlotLayout } from '../layout/slot-layout.js';
import type { SlotName } from '../layout/slot.js';

/**
 * One step of an activation plan (docs/protocol.md#activation-steps), direct or managed. Each
 * step is one durable effect — one port call, or for a sweep one call per temp — and so one
 * crash point, like a layout action: after a crash the next process judges the host afresh from
 * the marker or the record the plan wrote, never from memory.
 */
export type ActivationStep =
  /** Check the candidate (file type, quarantine, ELF machine, `version`, never downgrade). */
  | { readonly kind: 'verify-candidate' }
  /** Preflight only: the migration a host not yet managed gets first. */
  | { readonly kind: 'initialize-layout'; readonly actions: readonly LayoutAction[] }
  | { readonly kind: 'remove-stale-temps'; readonly paths: readonly string[] }
  | { readonly kind: 'point-last-good'; readonly slot: SlotName; readonly why: 'protect' | 'repair' }
  /** Direct path: the durable marker an interrupted activation is resolved from. */
  | { readonly kind: 'mark-activation'; readonly previous: SlotName; readonly candidate: SlotName }
  /** Managed path, row 5: the record names the candidate slot and the slot that runs. */
  | { readonly kind: 'record-candidate'; readonly candidate: SlotName; readonly previous: SlotName }
  /** Managed path, row 6: download, verify and extract the release into the layout's staging file. */
  | { readonly kind: 'download-candidate' }
  | { readonly kind: 'install-candidate'; readonly slot: SlotName }
  /** Managed path, row 6: the record holds the digest of what the candidate slot now holds. */
  | { readonly kind: 'record-digest' }
  /** Managed path: the staging file is gone (moved into the slot, or removed when not needed). */
  | { readonly kind: 'discard-staging' }
  | { readonly kind: 'switch-current'; readonly slot: SlotName }
  /** Managed path, row 7: the record says the switch happened (`switchCommitted`). */
  | { readonly kind: 'commit-switch' }
  /** Managed path, identical candidate: Complete is the decided outcome (`completed`). */
  | { readonly kind: 'record-completion' }
  | { readonly kind: 'update-service-assets' }
  | { readonly kind: 'restart-service' }
  | { readonly kind: 'wait-healthy'; readonly slot: SlotName }
  /** Direct path: the candidate stays healthy for its watch window (docs/protocol.md#watch-window). */
  | { readonly kind: 'watch-candidate'; readonly slot: SlotName; readonly windowMs: number }
  | { readonly kind: 'sync-container'; readonly slot: SlotName };

export type ActivationStepKind = ActivationStep['kind'];

/** The steps the layout engine runs: links, slots and temps. */
export const LAYOUT_STEP_KINDS = [
  'initialize-layout',
  'remove-stale-temps',
  'point-last-good',
  'install-candidate',
  'switch-current',
] as const satisfies readonly ActivationStepKind[];

export type LayoutStep = Extract<ActivationStep, { readonly kind: (typeof LAYOUT_STEP_KINDS)[number] }>;

export function isLayoutStep(step: ActivationStep): step is LayoutStep {
  return (LAYOUT_STEP_KINDS as readonly ActivationStepKind[]).includes(step.kind);
}

/**
 * The identical-candidate rule, for both paths: a candidate with the digest of the binary that
 * runs now is not a change. Nothing is installed and nothing is switched; the plan targets the
 * running slot.
 */
export function candidateChanges(candidateDigest: Sha256, activeDigest: Sha256): boolean {
  return candidateDigest !== activeDigest;
}

export interface SlotChange {
  /** The slot that runs now (current names it). */
  readonly active: SlotName;
  /** The slot the candidate is written into: the other one, or the active one when identical. */
  readonly target: SlotName;
  /** The slot last-good names directly, or null when it names none. */
  readonly lastGood: SlotName | null;
}

/**
 * The last-good rule, for both paths: last-good names a slot at all (repair), and it moves to
 * the running slot before the other slot is overwritten (protect), so no moment leaves it
 * naming a half-replaced slot and, when current moves, it names the binary that ran.
 */
export function lastGoodSteps(change: SlotChange): ActivationStep[] {
  if (change.lastGood === null) return [{ kind: 'point-last-good', slot: change.active, why: 'repair' }];
  if (change.lastGood === change.target && change.target !== change.active)
    return [{ kind: 'point-last-good', slot: change.active, why: 'protect' }];
  return [];
}

/** Each path's own durable notes around the slot change: the marker, or the record writes. */
export interface SlotChangeNotes {
  readonly beforeInstall?: readonly ActivationStep[];
  readonly afterInstall?: readonly ActivationStep[];
  readonly afterSwitch?: readonly ActivationStep[];
}

/**
 * The slot change of a changed candidate, the same on both paths: last-good made safe, the
 * candidate written into the target slot, current switched to it — with the path's notes in
 * between, so whatever a crash cuts short is described by a durable marker or record.
 */
export function planSlotChange(change: SlotChange, notes: SlotChangeNotes): ActivationStep[] {
  return [
    ...lastGoodSteps(change),
    ...(notes.beforeInstall ?? []),
    { kind: 'install-candidate', slot: change.target },
    ...(notes.afterInstall ?? []),
    { kind: 'switch-current', slot: change.target },
    ...(notes.afterSwitch ?? []),
  ];
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
    case 'record-candidate':
      return `record ${slotPath(layout, step.candidate)} as the candidate slot`;
    case 'download-candidate':
      return `download, verify and extract the release into ${layout.downloadStaging}`;
    case 'install-candidate':
      return `install the candidate into ${slotPath(layout, step.slot)}`;
    case 'record-digest':
      return "record the candidate's digest";
    case 'discard-staging':
      return `remove ${layout.downloadStaging}`;
    case 'switch-current':
      return `switch ${layout.current} to ${slotPath(layout, step.slot)}`;
    case 'commit-switch':
      return 'record that the switch was made';
    case 'record-completion':
      return 'record the upgrade as complete: the candidate already runs';
    case 'update-service-assets':
      return 'update the service configuration and reload the service manager';
    case 'restart-service':
      return 'restart the agent service';
    case 'wait-healthy':
      return `wait until the agent runs ${slotPath(layout, step.slot)} and stays up`;
    case 'watch-candidate':
      return `watch the agent on ${slotPath(layout, step.slot)} for ${Math.ceil(step.windowMs / 1000)} s (its watch window)`;
    case 'sync-container':
      return `copy ${slotPath(layout, step.slot)} into the active container`;
  }
}
