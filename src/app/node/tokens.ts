import type { ServiceIdentifier } from 'inversify';
import type { HostArchitecture } from '../../domain/node/artifact/archive-rules.js';
import type { SlotLayout } from '../../domain/node/layout/slot-layout.js';
import type { ArchiveExtractor } from '../../ports/node/archive-extractor.js';
import type { ArtifactSource } from '../../ports/common/artifact-source.js';
import type { ReleaseTrust } from '../../ports/common/release-trust.js';
import type { ContainerRootfs } from '../../ports/node/container-rootfs.js';
import type { FileSystem } from '../../ports/node/file-system.js';
import type { HostLock } from '../../ports/node/host-lock.js';
import type { OperationStore } from '../../ports/node/operation-store.js';
import type { ProcessRunner } from '../../ports/common/process-runner.js';
import type { ServiceManager } from '../../ports/node/service-manager.js';
import type { HealthProbe } from '../../ports/node/health-probe.js';
import type { Activation, ActivationDependencies } from './activation/activation.js';
import type { InterruptedActivation } from './activation/interrupted-activation.js';
import type { SlotEffects } from './activation/slot-effects.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import type { HealthGate } from './health/health-gate.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine } from './layout/layout-engine.js';
import type { AgentUpgradeHandler } from './managed/agent-upgrade-handler.js';
import type { HostEffects } from './managed/host-effects.js';
import type { AgentVersionReport } from './managed/agent-version-report.js';
import type { ManagedSession, ManagedSessionFactory } from './managed/managed-session.js';
import type { RecoverDependencies } from './managed/recover.js';
import type { StartupGate } from './managed/startup-gate.js';
import type { MarkerStore } from './record/marker-store.js';
import type { WatchStore } from './record/watch-store.js';
import type { WatchEffects } from './health/watch-effects.js';
import type { RecordStore } from './record/record-store.js';
import type { OperationStoreFactory, SessionOptions, SessionState } from './managed/session-options.js';
import type { StateStore } from './state/state-store.js';
import type { StatusDependencies } from './status/read-status.js';
import { CommonTokens } from '../common/common-tokens.js';
import type { Upgrader } from './upgrader.js';

/**
 * The only place service identifiers are created. Ports are what a platform module binds; the
 * rest is bound once, by the core and session modules, for every platform alike.
 */
export const Tokens = Object.freeze({
  // What the caller of createUpgrader supplies.
  Config: Symbol('Config') as ServiceIdentifier<UpgraderConfig>,
  Layout: Symbol('Layout') as ServiceIdentifier<SlotLayout>,
  HostIdentity: Symbol('HostIdentity') as ServiceIdentifier<HostIdentity>,
  Logger: CommonTokens.Logger,
  // Ports: bound by exactly one platform module each.
  FileSystem: Symbol('FileSystem') as ServiceIdentifier<FileSystem>,
  Clock: CommonTokens.Clock,
  HostLock: Symbol('HostLock') as ServiceIdentifier<HostLock>,
  ArtifactSource: Symbol('ArtifactSource') as ServiceIdentifier<ArtifactSource>,
  ArchiveExtractor: Symbol('ArchiveExtractor') as ServiceIdentifier<ArchiveExtractor>,
  /** The publisher's signatures (config `trust`); null when releases are trusted by URL and digest. */
  ReleaseTrust: Symbol('ReleaseTrust') as ServiceIdentifier<ReleaseTrust | null>,
  ProcessRunner: Symbol('ProcessRunner') as ServiceIdentifier<ProcessRunner>,
  ContainerRootfs: Symbol('ContainerRootfs') as ServiceIdentifier<ContainerRootfs>,
  ServiceManager: Symbol('ServiceManager') as ServiceIdentifier<ServiceManager>,
  HealthProbe: Symbol('HealthProbe') as ServiceIdentifier<HealthProbe>,
  OperationStoreFactory: Symbol('OperationStoreFactory') as ServiceIdentifier<OperationStoreFactory>,
  // The core: the use cases and what they share, one instance per process.
  Architecture: Symbol('Architecture') as ServiceIdentifier<HostArchitecture>,
  LayoutEngine: Symbol('LayoutEngine') as ServiceIdentifier<LayoutEngine>,
  RecordStore: Symbol('RecordStore') as ServiceIdentifier<RecordStore>,
  StateStore: Symbol('StateStore') as ServiceIdentifier<StateStore>,
  MarkerStore: Symbol('MarkerStore') as ServiceIdentifier<MarkerStore>,
  WatchStore: Symbol('WatchStore') as ServiceIdentifier<WatchStore>,
  /** The direct path's watch window (its owner is the activation marker). */
  DirectWatch: Symbol('DirectWatch') as ServiceIdentifier<WatchEffects>,
  HealthGate: Symbol('HealthGate') as ServiceIdentifier<HealthGate>,
  HostEffects: Symbol('HostEffects') as ServiceIdentifier<HostEffects>,
  SlotEffects: Symbol('SlotEffects') as ServiceIdentifier<SlotEffects>,
  InterruptedActivation: Symbol('InterruptedActivation') as ServiceIdentifier<InterruptedActivation>,
  ActivationDependencies: Symbol('ActivationDependencies') as ServiceIdentifier<ActivationDependencies>,
  Activation: Symbol('Activation') as ServiceIdentifier<Activation>,
  RecoverDependencies: Symbol('RecoverDependencies') as ServiceIdentifier<RecoverDependencies>,
  StatusDependencies: Symbol('StatusDependencies') as ServiceIdentifier<StatusDependencies>,
  ManagedSessionFactory: Symbol('ManagedSessionFactory') as ServiceIdentifier<ManagedSessionFactory>,
  Upgrader: Symbol('Upgrader') as ServiceIdentifier<Upgrader>,
  // One daemon session (a child container): its store, identity and the use cases built on them.
  OperationStore: Symbol('OperationStore') as ServiceIdentifier<OperationStore>,
  SessionOptions: Symbol('SessionOptions') as ServiceIdentifier<SessionOptions>,
  SessionState: Symbol('SessionState') as ServiceIdentifier<SessionState>,
  StartupGate: Symbol('StartupGate') as ServiceIdentifier<StartupGate>,
  AgentUpgradeHandler: Symbol('AgentUpgradeHandler') as ServiceIdentifier<AgentUpgradeHandler>,
  ManagedSession: Symbol('ManagedSession') as ServiceIdentifier<ManagedSession>,
  AgentVersionReport: Symbol('AgentVersionReport') as ServiceIdentifier<AgentVersionReport>,
});
