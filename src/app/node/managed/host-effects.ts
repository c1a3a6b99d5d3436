import type { Sha256 } from '../../../domain/common/digest.js';
import { linkedSlot } from '../../../domain/node/layout/host-facts.js';
import type { ContainerVerdict } from '../../../domain/node/recovery/recovery-vocabulary.js';
import { slotAt, slotPath } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { LayoutEngine } from '../layout/layout-engine.js';

export interface HostEffectDependencies {
  readonly fs: FileSystem;
  readonly services: ServiceManager;
  readonly container: ContainerRootfs;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
}

export interface LinkObservation {
  readonly current: SlotName | null;
  readonly lastGood: SlotName | null;
}

/**
 * The host-side effects the startup gate and `recover` execute, one port call (or one short,
 * idempotent sequence) each, plus the observations their decisions need.
 */
export class HostEffects {
  constructor(private readonly deps: HostEffectDependencies) {}

  async links(): Promise<LinkObservation> {
    const facts = await this.deps.engine.inspect();
    return { current: linkedSlot(facts, 'current'), lastGood: linkedSlot(facts, 'lastGood') };
  }

  /** The slot a real executable path is, or null (the agent or this process running elsewhere). */
  async slotOfExecutable(path: string | null): Promise<SlotName | null> {
    if (path === null) return null;
    const facts = await this.deps.engine.inspect();
    const resolved = await this.deps.fs.resolve(path);
    return resolved.kind === 'resolved' ? slotAt(facts.canonical, resolved.path) : null;
  }

  async realSlotPath(slot: SlotName): Promise<string> {
    const facts = await this.deps.engine.inspect();
    return slot === 'blue' ? facts.canonical.blue : facts.canonical.green;
  }

  /** Rollback's host half: last-good, then current, at `to` (each only when not already there). */
  async rollBackLinks(to: SlotName): Promise<void> {
    const links = await this.links();
    if (links.lastGood !== to) await this.deps.engine.pointLastGoodAt(to);
    if (links.current !== to) await this.deps.engine.pointCurrentAt(to);
  }

  async activeMachine(): Promise<string | null> {
    return this.deps.container.activeMachine();
  }

  /** nspawn ← the slot's binary. */
  async copyIntoContainer(slot: SlotName): Promise<void> {
    const machine = await this.activeMachine();
    if (machine === null) return;
    await this.deps.container.install(machine, slotPath(this.deps.engine.layout, slot));
  }

  /** The nspawn copy compared with the slot's binary, by digest. */
  async compareContainer(slot: SlotName): Promise<ContainerVerdict> {
    const machine = await this.activeMachine();
    if (machine === null) return 'not-applicable';
    const copy = await this.deps.container.digest(machine);
    if (copy === null) return 'differs';
    return copy.sha256 === (await this.digestOf(slot)) ? 'equal' : 'differs';
  }

  async digestOf(slot: SlotName): Promise<Sha256> {
    return (
      await this.deps.fs.hashFile(slotPath(this.deps.engine.layout, slot), this.deps.config.artifact.maxBinaryBytes)
    ).sha256;
  }

  /** Restarts the agent unit into `slot` and waits (bounded) until it runs it stably. */
  async restartAgentInto(slot: SlotName, resetFailed: boolean): Promise<boolean> {
    const { restarted } = await this.deps.services.restart({ resetFailed });
    if (!restarted) return false;
    const verdict = await this.deps.services.waitHealthy(await this.realSlotPath(slot), this.deps.config.health);
    return verdict.kind === 'healthy';
  }
}
