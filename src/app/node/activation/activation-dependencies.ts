import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import type { MarkerStore } from '../record/marker-store.js';
import type { RecordStore } from '../record/record-store.js';
import type { StateStore } from '../state/state-store.js';
import type { InterruptedActivation } from './interrupted-activation.js';
import type { SlotEffects } from './slot-effects.js';

/** What the direct activation and the steps it shares with the managed path are built on. */
export interface ActivationDependencies {
  readonly fs: FileSystem;
  readonly services: ServiceManager;
  readonly container: ContainerRootfs;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
  readonly arch: HostArchitecture;
  readonly records: RecordStore;
  readonly states: StateStore;
  readonly markers: MarkerStore;
  readonly effects: SlotEffects;
  readonly interrupted: InterruptedActivation;
  /** Signed releases: the trusted metadata a `--signed-target` is looked up in; null without a trust section. */
  readonly trust: ReleaseTrust | null;
}
