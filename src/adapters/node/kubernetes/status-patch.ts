import type { TerminalStatus } from '../../../ports/node/operation-store.js';
import type { MachineOperationView } from './machine-operation.js';

/**
 * The merge-patches the daemon writes to `status` (the contract of the reference store helpers):
 * phase, message, start and completion times, the `Completed` condition and, in the watch window,
 * the `Watching` condition. Each carries the
 * object's resourceVersion, so a concurrent writer makes the server answer 409 and the store
 * re-reads before it writes again. A merge-patch replaces the whole `conditions` list, so it is
 * the list as read with `Completed` written over: other writers' conditions stay, and
 * `lastTransitionTime` moves only when the condition's status changes (Kubernetes' convention).
 */
export function inProgressPatch(
  operation: MachineOperationView,
  message: string,
  nowIso: string,
  watching = false,
): object {
  const conditions = withCondition(operation.conditions, operation, 'Completed', {
    status: 'False',
    reason: 'InProgress',
    message,
    nowIso,
  });
  return {
    metadata: { resourceVersion: operation.resourceVersion },
    status: {
      phase: 'InProgress',
      message,
      startedAt: operation.startedAt ?? nowIso,
      conditions: watching
        ? withCondition(conditions, operation, 'Watching', { status: 'True', reason: 'WatchWindow', message, nowIso })
        : conditions,
    },
  };
}

export function terminalPatch(operation: MachineOperationView, status: TerminalStatus, nowIso: string): object {
  return {
    metadata: { resourceVersion: operation.resourceVersion },
    status: {
      phase: status.phase,
      message: status.message,
      startedAt: operation.startedAt ?? nowIso,
      completedAt: nowIso,
      conditions: endWatching(
        withCondition(operation.conditions, operation, 'Completed', {
          status: status.phase === 'Complete' ? 'True' : 'False',
          reason: status.reason,
          message: status.message,
          nowIso,
        }),
        operation,
        nowIso,
      ),
    },
  };
}

/** A terminal status ends the watch window: a `Watching` condition still True turns False. */
function endWatching(conditions: readonly object[], operation: MachineOperationView, nowIso: string): object[] {
  const watching = conditions.find((condition) => (condition as Record<string, unknown>)['type'] === 'Watching');
  if (watching === undefined || (watching as Record<string, unknown>)['status'] !== 'True') return [...conditions];
  return withCondition(conditions, operation, 'Watching', {
    status: 'False',
    reason: 'WatchEnded',
    message: 'the watch window ended',
    nowIso,
  });
}

interface ConditionValue {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly nowIso: string;
}

/** `conditions` with the condition `type` written over (or added). */
function withCondition(
  conditions: readonly object[],
  operation: MachineOperationView,
  type: 'Completed' | 'Watching',
  { status, reason, message, nowIso }: ConditionValue,
): object[] {
  const previous = conditions.find((condition) => (condition as Record<string, unknown>)['type'] === type) as
    Readonly<Record<string, unknown>> | undefined;
  const since = previous?.['lastTransitionTime'];
  const written = {
    type,
    status,
    reason,
    message,
    observedGeneration: operation.generation,
    lastTransitionTime: previous?.['status'] === status && typeof since === 'string' ? since : nowIso,
  };
  if (previous === undefined) return [...conditions, written];
  return conditions.map((condition) => (condition === previous ? written : condition));
}
