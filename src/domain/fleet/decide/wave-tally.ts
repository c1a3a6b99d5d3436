import { chargesBudget, holdsSlot, REASON_INVALID_PARAMETERS, REASON_UNTRUSTED } from './classify-child.js';
import type { Machine } from '../order/fleet.js';

/** What a wave's children add up to: the slots they hold and the failures they charge. */
export interface WaveTally {
  /** Operations holding a slot (live, timed out or not) plus announced creates. */
  readonly slots: number;
  /** Operations still running within their timeout plus announced creates: the wave is not done. */
  readonly running: number;
  readonly timedOutLive: number;
  readonly usedFailures: number;
  readonly invalidParameters: number;
  /** Operations that refused the release as not signed by the publisher (reason Untrusted). */
  readonly untrusted: number;
}

export function tally(children: readonly Machine[], announced: number): WaveTally {
  const counts = {
    slots: announced,
    running: announced,
    timedOutLive: 0,
    usedFailures: 0,
    invalidParameters: 0,
    untrusted: 0,
  };
  for (const machine of children) {
    const outcome = machine.forward?.outcome;
    if (outcome === undefined) continue;
    if (holdsSlot(outcome)) counts.slots += 1;
    if (outcome.kind === 'inFlight') counts.running += 1;
    if (outcome.kind === 'timedOut') counts.timedOutLive += 1;
    if (chargesBudget(outcome)) counts.usedFailures += 1;
    if (outcome.kind === 'failed' && outcome.reason === REASON_INVALID_PARAMETERS) counts.invalidParameters += 1;
    if (outcome.kind === 'failed' && outcome.reason === REASON_UNTRUSTED) counts.untrusted += 1;
  }
  return counts;
}
