import type { OperationStore } from '../../../ports/node/operation-store.js';

/** What one daemon session is started with; everything else comes from the composition root. */
export interface SessionOptions {
  readonly store: OperationStore;
  /** The real path of this process's executable (self-hosted: the daemon is the agent). */
  readonly selfExecutable: string | null;
  /** 32 hex characters, new for every process; generated when absent. */
  readonly instanceId?: string;
}

/** What the gate and the handler of one session share: whether the handler handed over. */
export interface SessionState {
  handedOver: boolean;
  readonly instanceId: string;
}

/** Opens the cluster connection on first use: only the daemon needs one. */
export type OperationStoreFactory = () => Promise<OperationStore>;
