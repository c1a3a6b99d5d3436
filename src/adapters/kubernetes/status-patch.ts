import type { TerminalStatus } from '../../ports/operation-store.js';
import type { MachineOperationView } from './machine-operation.js';

/**
 * The merge-patches the daemon writes to `status` (the contract of the reference store helpers):
 * phase, message, start and completion times and the one `Completed` condition. Each carries the
 * object's resourceVersion, so a concurrent writer makes the server answer 409 and the store
 * re-reads before it writes again.
 */
export function inProgressPatch(operation: MachineOperationView, message: string, nowIso: string): object {
  return {
    metadata: { resourceVersion: operation.resourceVersion },
    status: {
      phase: 'InProgress',
      message,
      startedAt: operation.startedAt ?? nowIso,
      conditions: [completedCondition(operation, 'False', 'InProgress', message, nowIso)],
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
      conditions: [
        completedCondition(
          operation,
          status.phase === 'Complete' ? 'True' : 'False',
          status.reason,
          status.message,
          nowIso,
        ),
      ],
    },
  };
}

function completedCondition(
  operation: MachineOperationView,
  status: 'True' | 'False',
  reason: string,
  message: string,
  nowIso: string,
): object {
  return {
    type: 'Completed',
    status,
    reason,
    message,
    observedGeneration: operation.generation,
    lastTransitionTime: nowIso,
  };
}
