import { failure } from '../../../domain/common/failure.js';
import { failureOutcome, RETRY_POLICY } from '../../../domain/node/daemon/retry-policy.js';
import { decideStartup } from '../../../domain/node/recovery/startup-policy.js';
import {
  NO_PROGRESS,
  type AgentMode,
  type CandidateHealth,
  type ContainerVerdict,
  type RunProgress,
  type StartupDecision,
} from '../../../domain/node/recovery/recovery-vocabulary.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import { withCompleted, withFailure, type UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import { isQuarantined, withQuarantined, withSlotInfo } from '../../../domain/node/record/upgrade-state.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { OperationStore, TerminalStatus } from '../../../ports/node/operation-store.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import { translatePortError } from '../../common/translate-port-error.js';
import type { HostEffects } from './host-effects.js';

/** Decisions one gate run may take before it gives up (I10); a full failure path needs ~12. */
export const GATE_STEPS_MAX = 64;
/** Publication attempts per decision, with doubling backoff from 1 s (1+2+4+8+16 s ≈ 31 s). */
export const PUBLISH_ATTEMPTS_MAX = 5;

export type GateOutcome =
  /** No record is left: host-changing reconciliation may run. */
  | { readonly kind: 'open' }
  /** This process hands over (its restart is scheduled, or the record is its own). */
  | { readonly kind: 'closed'; readonly reason: 'restart-scheduled' | 'own-record' }
  /** Publication kept failing; the record stays and the gate must be run again later. */
  | { readonly kind: 'stuck'; readonly reason: string };

export interface StartupGateDependencies {
  readonly effects: HostEffects;
  readonly records: RecordStore;
  readonly states: StateStore;
  readonly store: OperationStore;
  readonly services: ServiceManager;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: UpgraderConfig;
  readonly mode: AgentMode;
  /** This process's instance id (32 hex characters, new per process). */
  readonly instanceId: string;
  /** The real path of this process's own executable (self-hosted mode). */
  readonly selfExecutable: string | null;
  /** Whether this process's handler handed an upgrade over (scheduled its own restart). */
  readonly handedOver?: () => boolean;
}

/**
 * The startup gate (docs/protocol.md#startup-gate-s1s8): before any other
 * host-changing work, resolve a pending record. Each round re-observes the host, asks the
 * RecoveryPolicy for the next single decision and executes it; nothing but the durable record
 * and fresh observations decides, so a crash anywhere is resumed by the next process.
 */
export class StartupGate {
  private progress: RunProgress = NO_PROGRESS;
  /**
   * The slot this process's executable was when the gate first ran (at process start). Resolved
   * once: a process started from the legacy file keeps running that file even after migration
   * turns its path into a link to the candidate.
   */
  private selfSlot: Promise<SlotName | null> | null = null;
  private health: CandidateHealth = 'unknown';
  private container: ContainerVerdict = 'unknown';

  constructor(private readonly deps: StartupGateDependencies) {}

  async run(): Promise<GateOutcome> {
    for (let step = 0; step < GATE_STEPS_MAX; step += 1) {
      const record = unwrap(await this.deps.records.read());
      const decision = decideStartup({
        record,
        mode: this.deps.mode,
        instanceId: this.deps.instanceId,
        handedOver: this.deps.handedOver?.() ?? false,
        observed: await this.observe(record),
        progress: this.progress,
      });
      this.deps.logger.info(
        { [LogKeys.action]: decision.kind, rule: decision.rule, [LogKeys.operation]: record?.operation.name },
        `Startup gate: ${decision.kind} (${decision.rule}).`,
      );
      const outcome = await this.execute(decision, record);
      if (outcome !== null) return outcome;
    }
    return raise(failure('E_SERVICE', `the startup gate did not settle within ${GATE_STEPS_MAX} steps`));
  }

  private async observe(record: UpgradeRecord | null) {
    const { effects } = this.deps;
    const links = await effects.links();
    const state = record === null ? null : unwrap(await this.deps.states.read());
    const candidate = record?.candidate ?? null;
    const machine = record === null ? null : await effects.activeMachine();
    // A record without the candidate's digest (written by an older release, or edited) is
    // judged by what the candidate slot holds now, so committing the state settles it.
    const candidateDigest =
      record?.candidateDigest ?? (candidate !== null && state !== null ? await this.slotDigest(candidate) : null);
    return {
      current: links.current,
      lastGood: links.lastGood,
      self:
        this.deps.mode === 'self-hosted'
          ? await (this.selfSlot ??= effects.slotOfExecutable(this.deps.selfExecutable))
          : null,
      agent:
        this.deps.mode === 'sidecar' ? await effects.slotOfExecutable(await this.deps.services.mainExecutable()) : null,
      candidateHealth: this.health,
      container: machine === null ? ('not-applicable' as const) : this.container,
      quarantined: state !== null && record?.candidateDigest != null && isQuarantined(state, record.candidateDigest),
      stateCommitted:
        state !== null &&
        candidate !== null &&
        candidateDigest !== null &&
        state.slots[candidate]?.digest === candidateDigest,
    };
  }

  /** Runs one decision; returns the gate's outcome when the decision ends this run. */
  private async execute(decision: StartupDecision, record: UpgradeRecord | null): Promise<GateOutcome | null> {
    const { effects, records, states } = this.deps;
    switch (decision.kind) {
      case 'open-gate':
        return { kind: 'open' };
      case 'ignore-own-record':
        return { kind: 'closed', reason: 'own-record' };
      case 'wait':
        return { kind: 'closed', reason: 'restart-scheduled' };
      case 'record-failure':
        await records.write(withFailure(need(record), decision.failure, decision.recoveryRequired));
        return null;
      case 'measure-health':
        this.health = await this.measureHealth(decision.slot);
        return null;
      // The same copy: toward the committed slot (sync), or back to last-good (restore).
      case 'sync-container':
      case 'restore-container':
        await effects.copyIntoContainer(decision.from);
        this.progress = { ...this.progress, containerCopiedFrom: decision.from };
        this.container = 'unknown';
        return null;
      case 'check-container':
        this.container = await effects.compareContainer(decision.slot);
        return null;
      case 'commit-state': {
        const state = unwrap(await states.read());
        const digest = decision.digest ?? (await effects.digestOf(decision.slot));
        await states.write(
          withSlotInfo(state, decision.slot, {
            digest,
            version:
              state.slots[decision.slot]?.digest === digest ? (state.slots[decision.slot]?.version ?? null) : null,
          }),
        );
        return null;
      }
      case 'record-completion':
        await records.write(withCompleted(need(record)));
        return null;
      case 'roll-back':
        await effects.rollBackLinks(decision.to);
        this.container = 'unknown';
        return null;
      case 'restart-into-last-good':
        await this.deps.services.scheduleRestart();
        this.progress = { ...this.progress, restartedInto: decision.slot };
        return null;
      case 'restart-agent':
        await effects.restartAgentInto(decision.into, true);
        this.progress = { ...this.progress, restartedInto: decision.into };
        return null;
      case 'quarantine':
        await states.write(withQuarantined(unwrap(await states.read()), decision.digest));
        return null;
      case 'publish':
        return (await this.publish(need(record), decision.status))
          ? null
          : { kind: 'stuck', reason: 'the terminal status could not be published' };
      case 'delete-record':
        await records.delete();
        this.progress = NO_PROGRESS;
        this.health = 'unknown';
        this.container = 'unknown';
        return null;
    }
  }

  private async slotDigest(slot: SlotName) {
    return this.deps.effects.digestOf(slot).catch((error: unknown) => {
      if (translatePortError(error) === null) throw error;
      return null;
    });
  }

  /**
   * Self-hosted: this process is the candidate (the policy checked `self`); it must stay up for
   * the stability interval. Sidecar: the agent's main process must run the candidate stably.
   */
  private async measureHealth(slot: SlotName): Promise<CandidateHealth> {
    const { health } = this.deps.config;
    if (this.deps.mode === 'self-hosted') {
      await this.deps.clock.sleep(health.stableMs);
      return 'healthy';
    }
    const verdict = await this.deps.services.waitHealthy(await this.deps.effects.realSlotPath(slot), health);
    return verdict.kind === 'healthy' ? 'healthy' : 'unhealthy';
  }

  /** Publishes with bounded, doubling backoff; a deleted operation counts as published. */
  private async publish(record: UpgradeRecord, status: TerminalStatus): Promise<boolean> {
    const operation = record.operation;
    let delayMs = RETRY_POLICY.publishFirstMs;
    for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS_MAX; attempt += 1) {
      try {
        const written = await this.deps.store.publish(operation, status);
        // Refused after InProgress was accepted: the cluster's policy changed under the upgrade.
        if (written.kind === 'forbidden')
          this.deps.logger.error(
            { [LogKeys.operation]: operation.name },
            "This node may no longer write the operation's status; its result stays unpublished.",
          );
        this.progress = { ...this.progress, published: true };
        return true;
      } catch (error) {
        const translated = translatePortError(error);
        // No retry fixes credentials the cluster keeps refusing: the daemon must exit instead.
        if (translated === null || failureOutcome(translated).kind === 'terminal-failure') throw error;
        this.deps.logger.warn(
          { [LogKeys.operation]: operation.name, [LogKeys.code]: translated.code, attempt },
          'Publishing the upgrade result failed; retrying.',
        );
        if (attempt < PUBLISH_ATTEMPTS_MAX) await this.deps.clock.sleep(delayMs);
        delayMs *= 2;
      }
    }
    this.deps.logger.error(
      { [LogKeys.operation]: operation.name },
      'The upgrade result could not be published; the record is kept and publication will be retried.',
    );
    return false;
  }
}

function need(record: UpgradeRecord | null): UpgradeRecord {
  if (record === null) raise(failure('E_RECORD', 'the upgrade record disappeared while the startup gate ran'));
  return record;
}
