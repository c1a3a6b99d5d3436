import { ProblemList } from './spec-problems.js';

/** An int-or-percent field (`5` or `"10%"`), as Kubernetes' IntOrString. */
export type Amount =
  { readonly kind: 'count'; readonly value: number } | { readonly kind: 'percent'; readonly value: number };

export const count = (value: number): Amount => ({ kind: 'count', value });
export const percent = (value: number): Amount => ({ kind: 'percent', value });

const PERCENT = /^(\d{1,3})%$/;
const COUNT_MAX = 1_000_000;

/** `undefined` gives the default; anything but a non-negative integer or `"N%"` (0–100) is a problem. */
export function parseAmount(raw: unknown, path: string, fallback: Amount, problems: ProblemList): Amount {
  if (raw === undefined) return fallback;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= COUNT_MAX) return count(raw);
  if (typeof raw === 'string') {
    const match = PERCENT.exec(raw);
    if (match !== null && Number(match[1]) <= 100) return percent(Number(match[1]));
  }
  problems.add('E_ROLLOUT_AMOUNT', path, 'must be a non-negative integer or a percentage such as "10%"');
  return fallback;
}

/**
 * A cap: never below 1, since a cap of 0 would stop everything without saying so. maxInFlight
 * rounds percentages up (10% of 5 machines is 1); maxUnavailable rounds down, as Kubernetes does,
 * because it bounds harm rather than pace.
 */
export function resolveCap(amount: Amount, base: number, rounding: 'up' | 'down'): number {
  const exact = (amount.value * base) / 100;
  const value = amount.kind === 'count' ? amount.value : rounding === 'up' ? Math.ceil(exact) : Math.floor(exact);
  return Math.max(1, value);
}

/** A tolerance such as a failure budget: percentages round down, so 1% of 50 machines is 0. */
export function resolveTolerance(amount: Amount, base: number): number {
  return amount.kind === 'count' ? amount.value : Math.floor((amount.value * base) / 100);
}

/** How many machines a wave has reached when it ends: percentages round up, never beyond the fleet. */
export function resolveCumulative(amount: Amount, fleet: number): number {
  const value = amount.kind === 'count' ? amount.value : Math.ceil((amount.value * fleet) / 100);
  return Math.min(fleet, value);
}

export function formatAmount(amount: Amount): number | string {
  return amount.kind === 'count' ? amount.value : `${amount.value}%`;
}
