import type { ArchiveExtractor } from '../../ports/archive-extractor.js';
import type { ArtifactSource } from '../../ports/artifact-source.js';
import type { Clock } from '../../ports/clock.js';
import type { ContainerRootfs } from '../../ports/container-rootfs.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { HostLock } from '../../ports/host-lock.js';
import type { Logger } from '../../ports/logger.js';
import type { OperationStore } from '../../ports/operation-store.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { ServiceManager } from '../../ports/service-manager.js';

/** Ports an embedder (or a test) supplies instead of the built-in adapters. */
export interface PortOverrides {
  readonly artifactSource?: ArtifactSource;
  readonly archiveExtractor?: ArchiveExtractor;
  readonly processRunner?: ProcessRunner;
  readonly containerRootfs?: ContainerRootfs;
  readonly fileSystem?: FileSystem;
  readonly clock?: Clock;
  readonly hostLock?: HostLock;
  readonly serviceManager?: ServiceManager;
  readonly logger?: Logger;
  readonly operationStore?: OperationStore;
}
