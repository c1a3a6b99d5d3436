import type { Sha256 } from '../../../domain/common/digest.js';
import { failure } from '../../../domain/common/failure.js';
import { decideStartup } from '../../../domain/node/recovery/startup-policy.js';
import { NO_RESTART_OBSERVATION } from '../../../domain/node/recovery/watch-rules.js';
import {
  NO_PROGRESS,
  type AgentMode,
  type CandidateHealth,
  type ContainerVerdict,
  type RunProgress,
  type StartupDecision,
} from '../../../domain/node/recovery/recovery-vocabulary.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import {
  withCompleted,
  withFailure,
  type RecordedFailure,
  type UpgradeRecord,
} from '../../../domain/node/record/upgrade-record.js';
import { isQuarantined, withQuarantined, withSlotInfo } from '../../../domain/node/record/upgrade-state.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { OperationStore } from '../../../ports/node/operation-store.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { probeReasonOf, withProbeReason, type HealthGate } from '../health/health-gate.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import { translatePortError } from '../../common/translate-port-error.js';
import type { HostEffects } from './host-effects.js';
import { publishOutcome } from './publish-outcome.js';
import type { WatchEffects } from '../health/watch-effects.js';

/** Decisions one gate run may take before it gives up (I10); a full failure path needs ~12. */
export const GATE_STEPS_MAX = 64;

type DecisionOf<Kind extends StartupDecision['kind']> = Extract<StartupDecision, { readonly kind: Kind }>;

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
  readonly health: HealthGate;
  /** The watch window's reads and effects (docs/protocol.md#watch-window). */
  readonly watching: WatchEffects;
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
  /** Why the probe failed the candidate, for the failure this process records (S5). */
  private probeReason: string | null = null;
  private container: ContainerVerdict = 'unknown';

  constructor(private readonly deps: StartupGateDependencies) {}

  async run(): Promise<GateOutcome> {
    for (let step = 0; step < GATE_STEPS_MAX; step += 1) {
      const record = unwrap(await this.deps.records.read());
      const watch = await this.deps.watching.read();
      const decision = decideStartup({
        record,
        mode: this.deps.mode,
        instanceId: this.deps.instanceId,
        handedOver: this.deps.handedOver?.() ?? false,
        observed: await this.observe(record, watch !== null),
        progress: this.progress,
        watch,
        watchMs: this.deps.config.health.watchMs,
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

  private async observe(record: UpgradeRecord | null, windowOnDisk: boolean) {
    const { effects } = this.deps;
    // The restart count costs a call: read it only while an upgrade may be on trial.
    const trial = record?.candidate != null && (windowOnDisk || this.deps.config.health.watchMs > 0);
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
      restarts: trial ? await this.deps.watching.restarts() : NO_RESTART_OBSERVATION,
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
        return this.recordFailure(need(record), decision.failure, decision.recoveryRequired);
      case 'measure-health':
        this.health = await this.measureHealth(decision.slot);
        return null;
      case 'start-watch':
      case 'rebase-watch':
      case 'report-watching':
      case 'watch':
      case 'delete-watch':
        await this.executeWatch(decision, record);
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
      case 'commit-state':
        await this.commitState(decision.slot, decision.digest);
        return null;
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
        if (!(await publishOutcome(this.deps, need(record), decision.status)))
          return { kind: 'stuck', reason: 'the terminal status could not be published' };
        this.progress = { ...this.progress, published: true };
        return null;
      case 'delete-record':
        await records.delete();
        this.progress = NO_PROGRESS;
        this.health = 'unknown';
        this.container = 'unknown';
        return null;
    }
  }

  /** The slot's digest into the state file, keeping the version it records for those very bytes. */
  private async commitState(slot: SlotName, recordedDigest: Sha256 | null): Promise<void> {
    const { effects, states } = this.deps;
    const state = unwrap(await states.read());
    const digest = recordedDigest ?? (await effects.digestOf(slot));
    const version = state.slots[slot]?.digest === digest ? (state.slots[slot]?.version ?? null) : null;
    await states.write(withSlotInfo(state, slot, { digest, version }));
  }

  /** The watch window's decisions (docs/protocol.md#watch-window): one write or one slice each. */
  private async executeWatch(
    decision: DecisionOf<'start-watch' | 'rebase-watch' | 'report-watching' | 'watch' | 'delete-watch'>,
    record: UpgradeRecord | null,
  ): Promise<void> {
    const { watching } = this.deps;
    switch (decision.kind) {
      case 'start-watch':
        return watching.open(decision.slot, decision.digest, decision.windowMs);
      case 'rebase-watch':
        return watching.rebase();
      case 'report-watching':
        await watching.report(need(record), this.deps.store);
        this.progress = { ...this.progress, watchReported: true };
        return;
      case 'watch': {
        const verdict = await watching.watch(decision.slot, decision.sliceMs);
        if (verdict.kind === 'healthy') return;
        this.health = 'unhealthy';
        this.probeReason = probeReasonOf(verdict);
        return;
      }
      case 'delete-watch':
        return watching.delete();
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
   * Then, either way, the health probe when one is configured (health-gate.ts).
   */
  private async measureHealth(slot: SlotName): Promise<CandidateHealth> {
    const { health } = this.deps;
    const verdict =
      this.deps.mode === 'self-hosted'
        ? await health.judgeSelf()
        : await health.judge(await this.deps.effects.realSlotPath(slot), 'candidate');
    this.probeReason = probeReasonOf(verdict);
    return verdict.kind === 'healthy' ? 'healthy' : 'unhealthy';
  }

  /** The failure as the policy decided it, with the probe's reason when the probe failed the candidate here. */
  private async recordFailure(record: UpgradeRecord, decided: RecordedFailure, recoveryRequired: boolean) {
    await this.deps.records.write(withFailure(record, withProbeReason(decided, this.probeReason), recoveryRequired));
    return null;
  }
}

function need(record: UpgradeRecord | null): UpgradeRecord {
  if (record === null) raise(failure('E_RECORD', 'the upgrade record disappeared while the startup gate ran'));
  return record;
}
