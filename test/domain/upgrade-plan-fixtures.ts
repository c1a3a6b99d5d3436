/** Hosts, steps, options and case shapes shared by the activation-plan tests. */
import type { Sha256 } from '../../src/domain/common/digest.js';
import { planMigration, type LayoutAction } from '../../src/domain/node/layout/migration-plan.js';
import type { SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import type { SlotName } from '../../src/domain/node/layout/slot.js';
import type { ActivationInput, ActivationPlan, ActivationStep } from '../../src/domain/node/activation/upgrade-plan.js';
import { DIGEST_A, DIGEST_B, TEXT, unwrap } from './layout-fixtures.js';
import { buildHost, file, link, observe, type Host, type HostSpec } from './layout-host-model.js';

const ROOTS = ['/', '/sb'] as const;

// ---- hosts

export const entryLink = link(TEXT.entryToCurrent);
export const legacy: HostSpec = { entry: file('legacy') };
export const managedOn = (current: SlotName, lastGood: HostSpec['lastGood']): HostSpec => ({
  entry: entryLink,
  blue: file('blue-bin'),
  green: file('green-bin'),
  current: link(current === 'blue' ? TEXT.blue : TEXT.green),
  lastGood,
});
export const lgBlue = link(TEXT.blue);
export const lgGreen = link(TEXT.green);
export const lgDangling = link('aks-flex-node-gone');

// ---- steps

export const V: ActivationStep = { kind: 'verify-candidate' };
export const protect = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'protect' });
export const repair = (slot: SlotName): ActivationStep => ({ kind: 'point-last-good', slot, why: 'repair' });
export const install = (slot: SlotName): ActivationStep => ({ kind: 'install-candidate', slot });
export const mark = (previous: SlotName, candidate: SlotName): ActivationStep => ({
  kind: 'mark-activation',
  previous,
  candidate,
});
export const sw = (slot: SlotName): ActivationStep => ({ kind: 'switch-current', slot });
export const assets: ActivationStep = { kind: 'update-service-assets' };
export const restart: ActivationStep = { kind: 'restart-service' };
export const wait = (slot: SlotName): ActivationStep => ({ kind: 'wait-healthy', slot });
export const sync = (slot: SlotName): ActivationStep => ({ kind: 'sync-container', slot });
export const init = (actions: readonly LayoutAction[]): ActivationStep => ({ kind: 'initialize-layout', actions });

export interface Options {
  readonly candidate: Sha256;
  readonly active: Sha256;
  readonly serviceAssetsCurrent: boolean;
  readonly serviceActive: boolean;
  readonly containerPresent: boolean;
}
export const CHANGED: Options = {
  candidate: DIGEST_B,
  active: DIGEST_A,
  serviceAssetsCurrent: true,
  serviceActive: true,
  containerPresent: false,
};
export const IDENTICAL: Options = { ...CHANGED, candidate: DIGEST_A };

export function inputFor(layout: SlotLayout, host: Host, options: Options): ActivationInput {
  return {
    layout,
    facts: observe(layout, host),
    candidateDigest: options.candidate,
    activeDigest: options.active,
    serviceAssetsCurrent: options.serviceAssetsCurrent,
    serviceActive: options.serviceActive,
    containerPresent: options.containerPresent,
    watchMs: 0,
  };
}

/** The migration actions the same host would need (what initialize-layout must carry). */
export function migrationActions(layout: SlotLayout, spec: HostSpec): readonly LayoutAction[] {
  return unwrap(planMigration(layout, observe(layout, buildHost(layout, spec)))).actions;
}

export type Case = readonly [
  label: string,
  spec: (layout: SlotLayout) => HostSpec,
  options: Options,
  expected: (layout: SlotLayout, spec: HostSpec) => ActivationPlan,
];

export const plan = (
  initializeLayout: boolean,
  activeSlot: SlotName,
  targetSlot: SlotName,
  candidateChanged: boolean,
  steps: readonly ActivationStep[],
  rollbackSlot: SlotName = activeSlot,
): ActivationPlan => ({ initializeLayout, activeSlot, targetSlot, candidateChanged, rollbackSlot, steps });

export function rows<T extends readonly unknown[]>(cases: readonly T[]): (readonly [string, ...T])[] {
  return ROOTS.flatMap((root) => cases.map((row) => [root, ...row] as const));
}
