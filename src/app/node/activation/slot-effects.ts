import { failure } from '../../../domain/common/failure.js';
import { linkedSlot, type LayoutFacts } from '../../../domain/node/layout/host-facts.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { ServiceActivity, ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { GatePurpose, GateVerdict, HealthGate } from '../health/health-gate.js';
import type { WatchEffects } from '../health/watch-effects.js';
import type { HealthObserver } from '../health/health-progress.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import { raise } from '../../common/failure-signal.js';
import type { LayoutEngine } from '../layout/layout-engine.js';

export interface SlotEffectDependencies {
  readonly services: ServiceManager;
  readonly gate: HealthGate;
  /** The direct path's watch window. */
  readonly window: WatchEffects;
  readonly container: ContainerRootfs;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
}

/** Where a node stands after a failure that could not be fully undone: what to tell an operator. */
export interface NodeCondition {
  readonly current: SlotName | null;
  readonly service: ServiceActivity;
}

/**
 * The direct path's effects on a slot beyond the layout: point current at it, restart the
 * agent into it and judge its health, copy it into the active container. Each is idempotent.
 */
export class SlotEffects {
  constructor(private readonly deps: SlotEffectDependencies) {}

  /** Current first (the host link), then the service, then the container copy. */
  async switchBackTo(slot: SlotName, facts: LayoutFacts, restart: boolean, observe?: HealthObserver): Promise<void> {
    await this.deps.engine.pointCurrentAt(slot);
    if (restart) {
      await this.deps.services.restart({ resetFailed: true });
      await this.expectHealthy(realSlotPath(facts, slot), 'known-good', undefined, observe);
    }
    if ((await this.deps.container.activeMachine()) !== null)
      await this.syncContainer(slotPath(this.deps.engine.layout, slot));
  }

  /**
   * The health gate for the binary at `expectedPath`, raised as `E_UNHEALTHY` with its reason
   * when it does not pass. `purpose` says whether the probe applies (health-gate.ts); `observe`
   * hears how the wait goes (health-progress.ts).
   */
  async expectHealthy(
    expectedPath: string,
    purpose: GatePurpose,
    signal?: AbortSignal,
    observe?: HealthObserver,
  ): Promise<void> {
    // The service manager's wait and the probe loop both end early once the signal aborts.
    const verdict = await this.deps.gate.judge(expectedPath, purpose, signal, observe);
    raiseUnlessHealthy(verdict, signal, 'did not become healthy');
  }

  /**
   * The candidate's watch window, from wherever it stands to its end (docs/protocol.md#watch-window),
   * raised as `E_UNHEALTHY` with its reason when the candidate fails inside it.
   */
  async expectWatched(
    slot: SlotName,
    digest: Sha256,
    windowMs: number,
    signal?: AbortSignal,
    observe?: HealthObserver,
  ): Promise<void> {
    const verdict = await this.deps.window.watchThrough(slot, digest, windowMs, signal, observe);
    raiseUnlessHealthy(verdict, signal, 'failed inside its watch window');
  }

  /** The direct path's window goes before its marker; a managed one is the startup gate's. */
  async discardWindow(): Promise<void> {
    if ((await this.deps.window.read())?.owner === 'direct') await this.deps.window.delete();
  }

  /** The health gate's verdict, as data. */
  judge(expectedPath: string, purpose: GatePurpose, signal?: AbortSignal): Promise<GateVerdict> {
    return this.deps.gate.judge(expectedPath, purpose, signal);
  }

  async syncContainer(sourcePath: string): Promise<void> {
    const machine = await this.deps.container.activeMachine();
    if (machine === null) return;
    const written = await this.deps.container.install(machine, sourcePath);
    const copy = await this.deps.container.digest(machine);
    if (copy === null || copy.sha256 !== written.sha256)
      raise(failure('E_DIGEST_MISMATCH', `the copy in machine ${machine} does not match the host binary`));
  }

  /** Observed, never remembered: what current names and what the service manager says. */
  async condition(): Promise<NodeCondition> {
    const current = await this.deps.engine
      .inspect()
      .then((facts) => linkedSlot(facts, 'current'))
      .catch(() => null);
    const service = await this.deps.services.activity().catch((): ServiceActivity => 'unknown');
    return { current, service };
  }
}

function raiseUnlessHealthy(verdict: GateVerdict, signal: AbortSignal | undefined, what: string): void {
  if (verdict.kind === 'healthy') return;
  if (signal?.aborted === true)
    raise(failure('E_INTERRUPTED', 'interrupted by a signal while waiting for the agent to become healthy'));
  raise(
    failure(
      'E_UNHEALTHY',
      verdict.kind === 'unhealthy' ? `the agent ${what}: ${verdict.reason}` : 'the agent is not running',
    ),
  );
}

export function realSlotPath(facts: LayoutFacts, slot: SlotName): string {
  return slot === 'blue' ? facts.canonical.blue : facts.canonical.green;
}
