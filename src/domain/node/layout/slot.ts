/** The two binary slots of the blue/green layout. */
export type SlotName = 'blue' | 'green';

export const SLOT_NAMES: readonly SlotName[] = ['blue', 'green'];

export function isSlotName(value: unknown): value is SlotName {
  return value === 'blue' || value === 'green';
}

/** The inactive slot: green when blue is current, otherwise blue. */
export function otherSlot(current: SlotName | null): SlotName {
  return current === 'blue' ? 'green' : 'blue';
}
