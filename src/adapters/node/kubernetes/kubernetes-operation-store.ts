import { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type {
  AgentUpgradeRequest,
  OperationRef,
  OperationStore,
  StatusWrite,
  TerminalStatus,
  VersionReportWrite,
} from '../../../ports/node/operation-store.js';
import type { KubeClient } from '../../common/kubernetes/kube-client.js';
import { isTerminalPhase, readMachineOperation, type MachineOperationView } from './machine-operation.js';
import { operationStream, type StreamSettings } from './operation-stream.js';
import { inProgressPatch, terminalPatch } from './status-patch.js';
import { UnauthorizedStreak } from '../../common/kubernetes/unauthorized-streak.js';

/** A 409 means someone wrote in between: re-read and write again, this many times at most. */
const CONFLICT_ATTEMPTS = 8;
const CONFLICT_DELAY_MS = 50;
/** Where a rollout controller reads the agent version a machine runs (docs/rollouts.md). */
export const AGENT_VERSION_ANNOTATION = 'agent-upgrade.dev/agent-version';
/** Signed releases: each trusted metadata role's version and expiry on this node, as JSON. */
export const TRUSTED_METADATA_ANNOTATION = 'agent-upgrade.dev/trusted-metadata';

export const DEFAULT_STREAM_SETTINGS: Omit<StreamSettings, 'machineName'> = {
  watchTimeoutMinSeconds: 300,
  watchTimeoutMaxSeconds: 600,
  idleTimeoutMs: 90_000,
  retryDelayMs: 1_000,
  retryDelayMaxMs: 30_000,
  listPageSize: 500,
  nodeLabelsTtlMs: 60_000,
  // Long enough for a rotation that is late (a token file re-read each minute, a plugin whose
  // backend is briefly away); short enough that a node with dead credentials restarts visibly.
  unauthorized: { attempts: 5, windowMs: 180_000 },
  random: Math.random,
};

export interface KubernetesStoreOptions {
  readonly client: KubeClient;
  readonly machineName: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stream?: Partial<Omit<StreamSettings, 'machineName'>>;
}

/**
 * MachineOperations in a real cluster (docs/operations.md#the-daemon-and-machineoperations):
 * list+watch for this machine's AgentUpgrade operations, status written by merge-patch with a
 * resourceVersion precondition and re-read on conflict. A missing object (or one re-created under
 * the same name) is `gone`; a status that is already terminal is never overwritten.
 */
export class KubernetesOperationStore implements OperationStore {
  private readonly settings: StreamSettings;
  /** Shared by the stream and the status writes: any request that authenticates resets it. */
  private readonly streak: UnauthorizedStreak;

  constructor(private readonly options: KubernetesStoreOptions) {
    this.settings = { ...DEFAULT_STREAM_SETTINGS, ...options.stream, machineName: options.machineName };
    this.streak = new UnauthorizedStreak(this.settings.unauthorized, options.clock);
  }

  markInProgress(
    ref: OperationRef,
    message: string,
    options: { readonly watching?: boolean } = {},
  ): Promise<StatusWrite> {
    return this.writeStatus(ref, (operation, nowIso) =>
      isTerminalPhase(operation.phase) ? null : inProgressPatch(operation, message, nowIso, options.watching === true),
    );
  }

  publish(ref: OperationRef, status: TerminalStatus): Promise<StatusWrite> {
    return this.writeStatus(ref, (operation, nowIso) => {
      if (!isTerminalPhase(operation.phase)) return terminalPatch(operation, status, nowIso);
      const same =
        operation.phase === status.phase && operation.reason === status.reason && operation.message === status.message;
      if (!same)
        this.options.logger.warn(
          { operation: ref.name },
          `MachineOperation ${ref.name} is already ${operation.phase}; its status is left as it is.`,
        );
      return null;
    });
  }

  async read(ref: OperationRef): Promise<AgentUpgradeRequest | null> {
    const operation = readMachineOperation(await this.observed(() => this.options.client.get(ref.name)));
    if (operation === null || (ref.uid !== null && operation.uid !== ref.uid)) return null;
    return {
      operation: { name: operation.name, uid: operation.uid },
      phase: operation.phase,
      parameters: operation.parameters,
    };
  }

  watch(signal: AbortSignal): AsyncIterable<AgentUpgradeRequest> {
    const { client, clock, logger } = this.options;
    return operationStream(client, this.settings, clock, logger, signal, this.streak);
  }

  /**
   * One merge-patch of this machine's own Node, no precondition: the annotation is this daemon's
   * alone and the last write wins. No such Node is `gone`; a refusal (another machine's Node
   * under the Node authorizer) is `forbidden`.
   */
  async reportAgentVersion(version: string, trustedMetadata: string | null): Promise<VersionReportWrite> {
    // A JSON merge patch: null removes the annotation (signed releases turned off).
    const annotations = { [AGENT_VERSION_ANNOTATION]: version, [TRUSTED_METADATA_ANNOTATION]: trustedMetadata };
    const patch = { metadata: { annotations } };
    try {
      await this.observed(() => this.options.client.patchNode(this.options.machineName, patch));
      return 'written';
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return 'gone';
      if (error instanceof ClusterError && error.status === 403) return 'forbidden';
      throw error;
    }
  }

  /** A request whose outcome says something about the credentials. */
  private async observed<T>(call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      this.streak.succeeded();
      return result;
    } catch (error) {
      this.streak.record(error);
      throw error;
    }
  }

  private async writeStatus(
    ref: OperationRef,
    patchFor: (operation: MachineOperationView, nowIso: string) => object | null,
  ): Promise<StatusWrite> {
    for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt += 1) {
      const operation = readMachineOperation(await this.observed(() => this.options.client.get(ref.name)));
      if (operation === null || (ref.uid !== null && operation.uid !== ref.uid)) return { kind: 'gone' };
      const patch = patchFor(operation, new Date(this.options.clock.nowMs()).toISOString());
      if (patch === null) return { kind: 'written' };
      try {
        await this.observed(() => this.options.client.patchStatus(ref.name, patch));
        return { kind: 'written' };
      } catch (error) {
        if (!(error instanceof ClusterError)) throw error;
        if (error.status === 404) return { kind: 'gone' };
        if (error.status === 403) return { kind: 'forbidden' };
        if (error.status !== 409) throw error;
        await this.options.clock.sleep(CONFLICT_DELAY_MS * attempt);
      }
    }
    throw new ClusterError(
      409,
      `the status of MachineOperation ${ref.name} kept changing under us (${CONFLICT_ATTEMPTS} conflicts)`,
    );
  }
}
