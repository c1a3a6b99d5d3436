import { resolveCap } from '../spec/amount.js';
import { holdsSlot, leftUnusable } from './classify-child.js';
import type { Fleet } from '../order/fleet.js';
import type { ForwardLedger } from './forward-ledger.js';
import type { RolloutStrategy } from '../spec/rollout-spec.js';

/**
 * maxUnavailable counts machines that may not be running a working agent right now: every live
 * operation of this rollout (forward or rollback, timed out or not, and the ones announced but not
 * created yet) and every failure that left its machine in an unknown state. A DaemonFailed
 * machine rolled itself back to last-good and is usable again, so it does not count.
 */
export interface Availability {
  readonly unavailable: number;
  /** The part that cannot free itself (timed-out operations and unusable failures), less what was accepted. */
  readonly stuck: number;
  /** The same before any acceptance: what a resume accepts. */
  readonly stuckTotal: number;
  /** `null`: no fleet-wide cap. */
  readonly cap: number | null;
  /** How many more operations may start before the cap is reached. */
  readonly room: number;
  /**
   * The room for rollback operations: the cap less the operations running within their timeout.
   * What is stuck is the damage a rollback repairs, so it does not hold the repair back.
   */
  readonly repairRoom: number;
}

export function computeAvailability(
  fleet: Fleet,
  forward: ForwardLedger,
  rollbackAnnounced: number,
  strategy: RolloutStrategy,
  acceptedUnavailable: number,
): Availability {
  let live = rollbackAnnounced + forward.waves.reduce((sum, wave) => sum + wave.announced.length, 0);
  let stuck = 0;
  let unusable = 0;
  let running = live;
  for (const machine of fleet.machines) {
    const latest = machine.rollback ?? machine.forward;
    if (latest === null) continue;
    if (holdsSlot(latest.outcome)) live += 1;
    if (latest.outcome.kind === 'inFlight') running += 1;
    if (latest.outcome.kind === 'timedOut') stuck += 1;
    if (leftUnusable(latest.outcome)) unusable += 1;
  }
  stuck += unusable;
  const accepted = Math.min(acceptedUnavailable, stuck);
  const unavailable = live + unusable - accepted;
  const cap = strategy.maxUnavailable === null ? null : resolveCap(strategy.maxUnavailable, forward.population, 'down');
  return {
    unavailable,
    stuck: stuck - accepted,
    stuckTotal: stuck,
    cap,
    room: cap === null ? Number.POSITIVE_INFINITY : Math.max(0, cap - unavailable),
    repairRoom: cap === null ? Number.POSITIVE_INFINITY : Math.max(0, cap - running),
  };
}
