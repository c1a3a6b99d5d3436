import type { ChildOperation } from '../order/snapshot.js';

/**
 * What one child operation says about its machine. The reasons are the daemon's
 * (docs/operations.md#the-agentupgrade-operation): DaemonFailed means the node rolled itself back
 * to last-good, ExecutionFailed, Untrusted (a release the publisher did not sign) and
 * InvalidParameters that the host was never switched, so those machines are still usable. Any other failure leaves the machine in an unknown state.
 */
export type ChildOutcome =
  | { readonly kind: 'inFlight' }
  /** Still live, but longer than operationTimeout: it keeps its slot, since it may still run. */
  | { readonly kind: 'timedOut'; readonly reason: 'TimedOut' | 'NotStarted'; readonly atMs: number }
  | { readonly kind: 'succeeded' }
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly atMs: number;
      /** The machine still runs a working agent (its own rollback, or never switched). */
      readonly usable: boolean;
    }
  /** The upstream controller failed it because the machine is gone: not the release's fault. */
  | { readonly kind: 'vanished' };

export const REASON_INVALID_PARAMETERS = 'InvalidParameters';
export const REASON_MACHINE_NOT_FOUND = 'MachineNotFound';
export const REASON_UNTRUSTED = 'Untrusted';
const USABLE_AFTER_FAILURE: readonly string[] = [
  'DaemonFailed',
  'ExecutionFailed',
  REASON_UNTRUSTED,
  REASON_INVALID_PARAMETERS,
];

export function classifyChild(child: ChildOperation, operationTimeoutMs: number, nowMs: number): ChildOutcome {
  switch (child.phase) {
    case 'Complete':
      return { kind: 'succeeded' };
    case 'Failed': {
      const reason = sanitizeReason(child.reason);
      if (reason === REASON_MACHINE_NOT_FOUND) return { kind: 'vanished' };
      return {
        kind: 'failed',
        reason,
        atMs: child.completedMs ?? child.startedMs ?? child.createdMs,
        usable: USABLE_AFTER_FAILURE.includes(reason),
      };
    }
    case 'InProgress': {
      const sinceMs = child.startedMs ?? child.createdMs;
      return nowMs - sinceMs > operationTimeoutMs
        ? { kind: 'timedOut', reason: 'TimedOut', atMs: sinceMs + operationTimeoutMs }
        : { kind: 'inFlight' };
    }
    case 'Pending':
    case null:
      // A daemon that never picked its operation up (down, unreachable) is told apart from one
      // that started and hung: the first says nothing about the release.
      return nowMs - child.createdMs > operationTimeoutMs
        ? { kind: 'timedOut', reason: 'NotStarted', atMs: child.createdMs + operationTimeoutMs }
        : { kind: 'inFlight' };
  }
}

/** Live operations hold a slot of every cap, timed out or not. */
export function holdsSlot(outcome: ChildOutcome): boolean {
  return outcome.kind === 'inFlight' || outcome.kind === 'timedOut';
}

/** What a failure budget is charged with: real failures and operations that started and hung. */
export function chargesBudget(outcome: ChildOutcome): boolean {
  return outcome.kind === 'failed' || (outcome.kind === 'timedOut' && outcome.reason === 'TimedOut');
}

/** Unavailable without an operation in flight: a failure that left the machine in an unknown state. */
export function leftUnusable(outcome: ChildOutcome): boolean {
  return outcome.kind === 'failed' && !outcome.usable;
}

/** A reason as a short identifier; the daemon writes CamelCase reasons, anything else is Unknown. */
export function sanitizeReason(reason: string | null): string {
  return reason !== null && /^[A-Za-z][A-Za-z0-9]{0,62}$/.test(reason) ? reason : 'Unknown';
}
