import type { SlotLayout } from '../domain/slot-layout.js';
import type { ArchiveExtractor } from '../ports/archive-extractor.js';
import type { ArtifactSource } from '../ports/artifact-source.js';
import type { Clock } from '../ports/clock.js';
import type { ContainerRootfs } from '../ports/container-rootfs.js';
import type { FileSystem } from '../ports/file-system.js';
import type { HostLock } from '../ports/host-lock.js';
import type { Logger } from '../ports/logger.js';
import type { ProcessRunner } from '../ports/process-runner.js';
import type { ServiceManager } from '../ports/service-manager.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine } from './layout/layout-engine.js';
import type { OperationStore } from '../ports/operation-store.js';

/** Opens the cluster connection on first use: only the daemon needs one. */
export type OperationStoreFactory = () => Promise<OperationStore>;

/** Everything the use cases run on, resolved once by the composition root. */
export interface UpgraderParts {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly fs: FileSystem;
  readonly lock: HostLock;
  readonly services: ServiceManager;
  readonly engine: LayoutEngine;
  readonly source: ArtifactSource;
  readonly extractor: ArchiveExtractor;
  readonly container: ContainerRootfs;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly openOperationStore: OperationStoreFactory;
}
