import type { ServiceIdentifier } from 'inversify';
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
import type { OperationStoreFactory } from './upgrader-parts.js';

/** The only place service identifiers are created. */
export const Tokens = Object.freeze({
  Config: Symbol('Config') as ServiceIdentifier<UpgraderConfig>,
  Layout: Symbol('Layout') as ServiceIdentifier<SlotLayout>,
  HostIdentity: Symbol('HostIdentity') as ServiceIdentifier<HostIdentity>,
  FileSystem: Symbol('FileSystem') as ServiceIdentifier<FileSystem>,
  Clock: Symbol('Clock') as ServiceIdentifier<Clock>,
  Logger: Symbol('Logger') as ServiceIdentifier<Logger>,
  HostLock: Symbol('HostLock') as ServiceIdentifier<HostLock>,
  ArtifactSource: Symbol('ArtifactSource') as ServiceIdentifier<ArtifactSource>,
  ArchiveExtractor: Symbol('ArchiveExtractor') as ServiceIdentifier<ArchiveExtractor>,
  ProcessRunner: Symbol('ProcessRunner') as ServiceIdentifier<ProcessRunner>,
  ContainerRootfs: Symbol('ContainerRootfs') as ServiceIdentifier<ContainerRootfs>,
  ServiceManager: Symbol('ServiceManager') as ServiceIdentifier<ServiceManager>,
  LayoutEngine: Symbol('LayoutEngine') as ServiceIdentifier<LayoutEngine>,
  OperationStoreFactory: Symbol('OperationStoreFactory') as ServiceIdentifier<OperationStoreFactory>,
});
