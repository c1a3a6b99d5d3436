import type { Sha256 } from '../../../domain/common/digest.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { AgentMode } from '../../../domain/node/recovery/recovery-vocabulary.js';
import type { UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import {
  newWatchWindow,
  nextWindowStep,
  WATCH_CHECKPOINTS,
  watchRemainingMs,
  withRestartBaseline,
  withWatched,
  type RestartObservation,
  type WatchOwner,
  type WatchWindow,
} from '../../../domain/node/record/watch-window.js';
import { failure } from '../../../domain/common/failure.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { OperationStore } from '../../../ports/node/operation-store.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import type { GateVerdict, HealthGate } from './health-gate.js';
import { tellHealth, type HealthObserver } from './health-progress.js';
import type { WatchStore } from '../record/watch-store.js';
import type { HostEffects } from '../managed/host-effects.js';

const INTERRUPTED: GateVerdict = { kind: 'unhealthy', reason: 'the wait was interrupted', source: 'process' };
const CRASHED: GateVerdict = {
  kind: 'unhealthy',
  reason: 'the service manager restarted the agent after a crash inside its watch window',
  source: 'process',
};

export interface WatchEffectsDependencies {
  readonly effects: HostEffects;
  readonly watches: WatchStore;
  readonly services: ServiceManager;
  readonly gate: HealthGate;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Who watches: a self-hosted daemon is the candidate itself; anyone else (a sidecar daemon, a
   * direct `activate`) watches the agent's main process.
   */
  readonly mode: AgentMode;
  /** Whose verdict the window delays: the managed path's record, or the direct path's marker. */
  readonly owner: WatchOwner;
  /** `health.pollMs`: how often the agent's main process is looked at. */
  readonly pollMs: number;
}

/**
 * The watch window's effects (docs/protocol.md#watch-window) for the startup gate, which runs
 * them one decision at a time, and for the direct path, which watches a whole window at once
 * (`watchThrough`). Each is one durable write or one slice of watching, so every crash inside
 * the window is a crash point the next process resumes from the window document.
 */
export class WatchEffects {
  /** The probe's failures in a row at the end of this process's last slice. */
  private probeFailuresInRow = 0;

  constructor(private readonly deps: WatchEffectsDependencies) {}

  read(): Promise<WatchWindow | null> {
    return this.deps.watches.read().then(unwrap);
  }

  /** The count the window compares: only while an upgrade may be on trial (it costs a call). */
  restarts(): Promise<RestartObservation> {
    return this.deps.services.restartCount();
  }

  async open(slot: SlotName, recordedDigest: Sha256 | null, windowMs: number): Promise<void> {
    const digest = recordedDigest ?? (await this.deps.effects.digestOf(slot));
    const now = await this.restarts();
    const window = newWatchWindow({
      owner: this.deps.owner,
      candidate: slot,
      candidateDigest: digest,
      windowMs,
      startedAt: new Date(this.deps.clock.nowMs()).toISOString(),
      restartEpoch: now.restartEpoch,
      restartsAtStart: now.restarts,
    });
    await this.deps.watches.write(window);
    this.deps.logger.info({ windowMs }, 'The upgraded agent passed its health gate; its watch window opened.');
  }

  async rebase(): Promise<void> {
    const now = await this.restarts();
    await this.deps.watches.write(withRestartBaseline(await this.need(), now.restartEpoch, now.restarts));
  }

  /** InProgress with the condition Watching, and how long is left (for people: never compared). */
  async report(record: UpgradeRecord, store: OperationStore): Promise<void> {
    const window = await this.need();
    const leftS = Math.ceil(watchRemainingMs(window) / 1000);
    const message = `watching the upgraded agent for ${leftS} s more (window opened ${window.startedAt})`;
    const written = await store.markInProgress(record.operation, message, { watching: true });
    if (written.kind !== 'written')
      this.deps.logger.warn({ [LogKeys.operation]: record.operation.name }, 'The watch window could not be reported.');
  }

  /**
   * Watches `slot` for `sliceMs`; healthy adds the slice to the window. With a probe, it must keep
   * passing (failures in a row are counted across this process's slices), the candidate still
   * running at every attempt. Without one, the process alone: sidecar, the agent's main process
   * must run the candidate, the same process, through the whole slice; self-hosted, this process
   * is the candidate, so surviving the slice is the proof. `onTick`, for display, hears of each
   * look at the candidate inside the slice.
   */
  async watch(slot: SlotName, sliceMs: number, signal?: AbortSignal, onTick?: () => void): Promise<GateVerdict> {
    const path = this.deps.mode === 'sidecar' ? await this.deps.effects.realSlotPath(slot) : null;
    const stillRunning = async () => path === null || (await this.deps.services.mainExecutable()) === path;
    const probed = await this.deps.gate.keepsPassing(sliceMs, this.probeFailuresInRow, stillRunning, signal, onTick);
    const verdict =
      probed?.verdict ??
      (path === null ? await this.sleep(sliceMs) : await this.agentStaysUp(path, sliceMs, signal, onTick));
    this.probeFailuresInRow = probed?.failuresInRow ?? 0;
    if (verdict.kind === 'healthy') await this.deps.watches.write(withWatched(await this.need(), sliceMs));
    return verdict;
  }

  delete(): Promise<void> {
    return this.deps.watches.delete();
  }

  /**
   * The window of the candidate in `slot` (digest `digest`), from wherever it stands — opened now,
   * or resumed from its document — to its end: healthy once all of it was watched, the first
   * unhealthy verdict otherwise (a crash counted by the service manager, the process, the probe,
   * or the signal). Bounded (I10): at most a slice per checkpoint, plus opening and rebasing.
   * `observe`, when given, hears how much of the window was watched, at each slice and inside it.
   */
  async watchThrough(
    slot: SlotName,
    digest: Sha256,
    windowMs: number,
    signal?: AbortSignal,
    observe?: HealthObserver,
  ): Promise<GateVerdict> {
    for (let round = 0; round < 2 * WATCH_CHECKPOINTS + 4; round += 1) {
      if (signal?.aborted === true) return INTERRUPTED;
      const stored = await this.read();
      const own = stored?.owner === this.deps.owner && stored.candidate === slot && stored.candidateDigest === digest;
      const ownWindow = own ? stored : null;
      const step = nextWindowStep(ownWindow, await this.restarts());
      if (step.kind === 'over') return { kind: 'healthy' };
      if (step.kind === 'crashed') return CRASHED;
      if (step.kind === 'open') await this.open(slot, digest, windowMs);
      if (step.kind === 'rebase') await this.rebase();
      if (step.kind !== 'watch') continue;
      const onTick =
        observe === undefined || ownWindow === null ? undefined : this.sliceTicker(observe, ownWindow, step.sliceMs);
      const verdict = await this.watch(slot, step.sliceMs, signal, onTick);
      if (verdict.kind !== 'healthy') return verdict;
    }
    return raise(failure('E_SERVICE', 'the watch window did not settle'));
  }

  /**
   * Tells `observe` how much of `window` is watched now that a slice of `sliceMs` started, and
   * returns what tells it again inside the slice: the slice's time so far counts, never past it.
   */
  private sliceTicker(observe: HealthObserver, window: WatchWindow, sliceMs: number): () => void {
    const { clock } = this.deps;
    const startMs = clock.monotonicMs();
    const tell = (): void => {
      const inSliceMs = Math.min(sliceMs, Math.max(0, clock.monotonicMs() - startMs));
      const watchedMs = Math.min(window.windowMs, window.watchedMs + inSliceMs);
      tellHealth(observe, { phase: 'watch', watchedMs, windowMs: window.windowMs });
    };
    tell();
    return tell;
  }

  private async sleep(ms: number): Promise<GateVerdict> {
    await this.deps.clock.sleep(ms);
    return { kind: 'healthy' };
  }

  /** A restart inside the slice leaves no time to stabilise again before the wait ends: unhealthy. */
  private async agentStaysUp(
    path: string,
    sliceMs: number,
    signal?: AbortSignal,
    onTick?: () => void,
  ): Promise<GateVerdict> {
    const { pollMs } = this.deps;
    const verdict = await this.deps.services.waitHealthy(
      path,
      { stableMs: sliceMs, timeoutMs: sliceMs + 2 * pollMs, pollMs },
      { ...(signal === undefined ? {} : { signal }), ...(onTick === undefined ? {} : { onPoll: () => onTick() }) },
    );
    return verdict.kind === 'unhealthy' ? { ...verdict, source: 'process' } : verdict;
  }

  private async need(): Promise<WatchWindow> {
    return (await this.read()) ?? raise(failure('E_RECORD', 'the watch window disappeared while it was watched'));
  }
}
