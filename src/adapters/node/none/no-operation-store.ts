import { ClusterError } from '../../../domain/common/port-errors.js';
import type {
  AgentUpgradeRequest,
  OperationStore,
  StatusWrite,
  VersionReportWrite,
} from '../../../ports/node/operation-store.js';

/**
 * `cluster.manager: "none"`: no operations arrive, and a status cannot be published (a pending
 * record then keeps the startup gate visibly stuck rather than being dropped). There is no Node
 * to report the agent version on: a report is a no-op.
 */
export class NoOperationStore implements OperationStore {
  async markInProgress(): Promise<StatusWrite> {
    throw new ClusterError(null, 'no cluster is configured (cluster.manager "none")');
  }

  async publish(): Promise<StatusWrite> {
    throw new ClusterError(null, 'no cluster is configured (cluster.manager "none"): the status cannot be published');
  }

  async read(): Promise<AgentUpgradeRequest | null> {
    return null;
  }

  /** No cluster, no Node: nothing to write, and nothing to retry. */
  async reportAgentVersion(): Promise<VersionReportWrite> {
    return 'written';
  }

  /** Delivers nothing, and ends when the daemon stops. */
  watch(signal: AbortSignal): AsyncIterable<AgentUpgradeRequest> {
    const untilStopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<AgentUpgradeRequest>> => {
          await untilStopped;
          return { done: true, value: undefined };
        },
      }),
    };
  }
}
