import {
  decideInterruptedActivation,
  type ActivationMarker,
  type MarkerHealth,
  type MarkerObservation,
} from '../../../domain/node/activation/activation-marker.js';
import { nextWindowStep } from '../../../domain/node/record/watch-window.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import { failure } from '../../../domain/common/failure.js';
import { linkedSlot } from '../../../domain/node/layout/host-facts.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import { withCommittedVersion, withQuarantined, withSlotInfo } from '../../../domain/node/record/upgrade-state.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import { LogKeys } from '../../common/log-keys.js';
import type { MarkerStore } from '../record/marker-store.js';
import type { StateStore } from '../state/state-store.js';
import type { WatchEffects } from '../health/watch-effects.js';
import type { SlotEffects } from './slot-effects.js';

/** Decisions one resolution may take (I10): measure, watch the rest of a window, then commit or roll back. */
const RESOLVE_STEPS_MAX = 5;

export interface InterruptedActivationDependencies {
  readonly fs: FileSystem;
  readonly services: ServiceManager;
  readonly container: ContainerRootfs;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
  readonly logger: Logger;
  readonly markers: MarkerStore;
  readonly states: StateStore;
  readonly effects: SlotEffects;
  /** The direct path's watch window. */
  readonly window: WatchEffects;
}

export interface ResolveOptions {
  /**
   * `scheduled` when the caller may itself be the agent (the self-hosted daemon): a synchronous
   * restart would kill it half-way, so the restart is handed to the service manager.
   */
  readonly restart: 'sync' | 'scheduled';
  /** `recover` runs because the agent failed: the candidate is proven bad without measuring. */
  readonly knownHealth?: MarkerHealth;
}

export type InterruptedOutcome = 'none' | 'discarded' | 'committed' | 'rolled-back';

/**
 * Resolves a direct activation that died before its verdict (its marker outlived it;
 * docs/protocol.md#interrupted-activation-marker). Runs under the host lock, before anything
 * else changes the host: `activate`, `install`, `rollback`, `migrate`, `recover`, the daemon's
 * start and each managed upgrade. Roll back unless proven healthy; every step is idempotent, so
 * a crash here is resolved by the next run.
 */
export class InterruptedActivation {
  private readonly effects: SlotEffects;

  constructor(private readonly deps: InterruptedActivationDependencies) {
    this.effects = deps.effects;
  }

  /** The marker an interrupted activation left, or null. */
  async pending(): Promise<ActivationMarker | null> {
    return unwrap(await this.deps.markers.read());
  }

  async resolve(options: ResolveOptions): Promise<InterruptedOutcome> {
    let health: MarkerHealth = options.knownHealth ?? 'unknown';
    for (let step = 0; step < RESOLVE_STEPS_MAX; step += 1) {
      const marker = unwrap(await this.deps.markers.read());
      if (marker === null) return 'none';
      const facts = await this.deps.engine.inspect();
      const decision = decideInterruptedActivation(marker, {
        current: linkedSlot(facts, 'current'),
        candidateSlotDigest: await this.digestOf(marker.candidate),
        health,
        window: await this.windowOf(marker),
      });
      this.deps.logger.warn(
        { [LogKeys.action]: decision.kind, [LogKeys.slot]: marker.candidate },
        `An interrupted direct activation is resolved: ${decision.kind}.`,
      );
      switch (decision.kind) {
        case 'discard': {
          // A rollback interrupted after current moved may not have reached the container yet,
          // or left its copy half-done: copy again (which also sweeps the copy's temps).
          const current = linkedSlot(facts, 'current');
          if (current !== null) await this.effects.syncContainer(slotPath(this.deps.engine.layout, current));
          await this.forget();
          return 'discarded';
        }
        case 'measure-health':
          health = await this.measure(decision.slot);
          break;
        case 'resume-watch':
          health = await this.watchRest(marker);
          break;
        case 'commit':
          await this.commit(marker);
          return 'committed';
        case 'roll-back':
          await this.rollBack(marker, decision.to, decision.quarantine, options.restart);
          return 'rolled-back';
      }
    }
    return raise(failure('E_SERVICE', `the interrupted activation did not settle within ${RESOLVE_STEPS_MAX} steps`));
  }

  /**
   * Healthy only when the agent runs the candidate stably and passes the probe (the whole gate);
   * never having run it is unproven.
   */
  private async measure(slot: SlotName): Promise<MarkerHealth> {
    const { services } = this.deps;
    const expected = (await this.deps.engine.inspect()).canonical[slot];
    if ((await services.activity()) !== 'active' || (await services.mainExecutable()) !== expected) return 'unproven';
    const verdict = await this.effects.judge(expected, 'candidate');
    return verdict.kind === 'healthy' ? 'healthy' : 'unhealthy';
  }

  /**
   * Where the candidate's window stands: its own document (this slot, these bytes), or — with
   * none — whether one is due (`health.watchMs`): a process killed before it opened the window
   * leaves the whole window to watch.
   */
  private async windowOf(marker: ActivationMarker): Promise<MarkerObservation['window']> {
    const stored = await this.deps.window.read();
    const own =
      stored?.owner === 'direct' &&
      stored.candidate === marker.candidate &&
      stored.candidateDigest === marker.candidateDigest;
    if (!own) return this.deps.config.health.watchMs > 0 ? 'open' : 'none';
    const step = nextWindowStep(stored, await this.deps.window.restarts());
    return step.kind === 'crashed' || step.kind === 'over' ? step.kind : 'open';
  }

  /** The rest of the window, as the activation that died would have watched it. */
  private async watchRest(marker: ActivationMarker): Promise<MarkerHealth> {
    const stored = await this.deps.window.read();
    const windowMs = stored?.owner === 'direct' ? stored.windowMs : this.deps.config.health.watchMs;
    const verdict = await this.deps.window.watchThrough(marker.candidate, marker.candidateDigest, windowMs);
    return verdict.kind === 'healthy' ? 'healthy' : 'unhealthy';
  }

  /** The verdict is final: the window's document first, then the marker. */
  private async forget(): Promise<void> {
    await this.effects.discardWindow();
    await this.deps.markers.delete();
  }

  private async commit(marker: ActivationMarker): Promise<void> {
    const state = unwrap(await this.deps.states.read());
    let next = withSlotInfo(state, marker.candidate, {
      digest: marker.candidateDigest,
      version: marker.candidateVersion,
    });
    if (marker.candidateVersion !== null) next = withCommittedVersion(next, marker.candidateVersion);
    await this.deps.states.write(next);
    await this.forget();
  }

  /** Quarantine first (the evidence), then current, the container, the agent, and the marker last. */
  private async rollBack(
    marker: ActivationMarker,
    to: SlotName,
    quarantine: boolean,
    restart: ResolveOptions['restart'],
  ): Promise<void> {
    const { engine, services, states } = this.deps;
    if (quarantine) await states.write(withQuarantined(unwrap(await states.read()), marker.candidateDigest));
    await engine.pointCurrentAt(to);
    await this.effects.syncContainer(slotPath(engine.layout, to));
    if (marker.serviceActive) {
      if (restart === 'scheduled') await services.scheduleRestart();
      else await services.restart({ resetFailed: true });
    }
    await this.forget();
  }

  private async digestOf(slot: SlotName): Promise<Sha256 | null> {
    const path = slotPath(this.deps.engine.layout, slot);
    const stat = await this.deps.fs.lstat(path);
    if (stat?.kind !== 'file') return null;
    return (await this.deps.fs.hashFile(path, this.deps.config.artifact.maxBinaryBytes)).sha256;
  }
}
