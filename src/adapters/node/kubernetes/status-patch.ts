import type { TerminalStatus } from '../../../ports/node/operation-store.js';
import type { MachineOperationView } from './machine-operation.js';

/**
 * The merge-patches the daemon writes to `status` (the contract of the reference store helpers):
 * phase, message, start and completion times and the `Completed` condition. Each carries the
 * object's resourceVersion, so a concurrent writer makes the server answer 409 and the store
 * re-reads before it writes again. A merge-patch replaces the whole `conditions` list, so it is
 * the list as read with `Completed` written over: other writers' conditions stay, and
 * `lastTransitionTime` moves only when the condition's status changes (Kubernetes' convention).
 */
export function inProgressPatch(operation: MachineOperationView, message: string, nowIso: string): object {
  return {
    metadata: { resourceVersion: operation.resourceVersion },
    status: {
      phase: 'InProgress',
      message,
      startedAt: operation.startedAt ?? nowIso,
      conditions: withCompleted(operation, 'False', 'InProgress', message, nowIso),
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
      conditions: withCompleted(
        operation,
        status.phase === 'Complete' ? 'True' : 'False',
        status.reason,
        status.message,
        nowIso,
      ),
    },
  };
}

function withCompleted(
  operation: MachineOperationView,
  status: 'True' | 'False',
  reason: string,
  message: string,
  nowIso: string,
): object[] {
  const previous = operation.conditions.find((condition) => condition['type'] === 'Completed');
  const since = previous?.['lastTransitionTime'];
  const completed = {
    type: 'Completed',
    status,
    reason,
    message,
    observedGeneration: operation.generation,
    lastTransitionTime: previous?.['status'] === status && typeof since === 'string' ? since : nowIso,
  };
  if (previous === undefined) return [...operation.conditions, completed];
  return operation.conditions.map((condition) => (condition === previous ? completed : condition));
}
