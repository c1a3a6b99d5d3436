import type { ChildOutcome } from '../decide/classify-child.js';
import { REASON_NODE_NOT_READY } from '../decide/node-verdict.js';
import type { Fleet } from '../order/fleet.js';
import type { FailureSample, FailureSummary } from './rollout-status.js';
import { formatTimestamp } from '../spec/time-text.js';
import {
  FAILURE_LABELS,
  FAILURE_SAMPLE_SIZE,
  MAX_FAILURE_LABELS,
  MAX_FAILURE_REASONS,
  MESSAGE_MAX_LENGTH,
} from '../spec/rollout-vocabulary.js';

/**
 * The evidence of the forward rollout's failures, bounded whatever the fleet size: the most
 * recent ones by name (at most 20), counts by reason, and counts by node label value, so a
 * release that fails only on arm64 or in one zone says so. Timed-out operations count, with the
 * reason TimedOut (started and hung) or NotStarted (never picked up), and so do Complete operations
 * whose Node did not prove it came back (NodeNotReady).
 */
export function summarizeFailures(fleet: Fleet): FailureSummary {
  const entries: (FailureSample & { readonly atMs: number })[] = [];
  const byReason = new Map<string, number>();
  const byLabel = new Map<string, number>();
  for (const machine of fleet.machines) {
    const forward = machine.forward;
    if (forward === null) continue;
    const { outcome, child } = forward;
    if (outcome.kind !== 'failed' && outcome.kind !== 'timedOut') continue;
    byReason.set(outcome.reason, (byReason.get(outcome.reason) ?? 0) + 1);
    for (const key of FAILURE_LABELS) {
      const value = machine.labels[key];
      if (value !== undefined) byLabel.set(`${key}=${value}`, (byLabel.get(`${key}=${value}`) ?? 0) + 1);
    }
    entries.push({
      machine: machine.name,
      operation: child.name,
      wave: forward.wave,
      reason: outcome.reason,
      message: truncate(failureMessage(outcome, child.message)),
      at: formatTimestamp(outcome.atMs),
      atMs: outcome.atMs,
    });
  }
  entries.sort((a, b) => b.atMs - a.atMs || (a.operation < b.operation ? -1 : 1));
  return {
    sample: entries.slice(0, FAILURE_SAMPLE_SIZE).map(({ atMs: _atMs, ...sample }) => sample),
    byReason: largest(byReason, MAX_FAILURE_REASONS),
    byLabel: largest(byLabel, MAX_FAILURE_LABELS),
  };
}

function failureMessage(outcome: ChildOutcome & { readonly reason: string }, message: string | null): string {
  if (outcome.kind === 'timedOut') return timeoutMessage(outcome.reason);
  // The operation itself reported Complete: its own message says nothing of the Node.
  if (outcome.reason === REASON_NODE_NOT_READY)
    return 'the operation completed, but its Node was not Ready with a renewed kubelet Lease';
  return message ?? '';
}

function timeoutMessage(reason: string): string {
  return reason === 'NotStarted'
    ? 'the node did not pick the operation up within operationTimeout'
    : 'the operation did not finish within operationTimeout';
}

export function truncate(text: string): string {
  return text.length <= MESSAGE_MAX_LENGTH ? text : `${text.slice(0, MESSAGE_MAX_LENGTH - 1)}…`;
}

/** The `limit` largest counts, ties by key, as a plain object in that order. */
function largest(counts: ReadonlyMap<string, number>, limit: number): Record<string, number> {
  const sorted = [...counts.entries()].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).slice(0, limit);
  return Object.fromEntries(sorted);
}
