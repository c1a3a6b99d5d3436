import type { ServiceIdentifier } from 'inversify';
import type { HostArchitecture } from '../domain/archive-rules.js';
import type { SlotLayout } from '../domain/slot-layout.js';
import type { ArchiveExtractor } from '../ports/archive-extractor.js';
import type { ArtifactSource } from '../ports/artifact-source.js';
import type { Clock } from '../ports/clock.js';
import type { ControllerCluster, LeaseStore } from '../ports/controller-cluster.js';
import type { ControllerMetrics } from '../ports/controller-metrics.js';
import type { ContainerRootfs } from '../ports/container-rootfs.js';
import type { FileSystem } from '../ports/file-system.js';
import type { HostLock } from '../ports/host-lock.js';
import type { Logger } from '../ports/logger.js';
import type { OperationStore } from '../ports/operation-store.js';
import type { ProcessRunner } from '../ports/process-runner.js';
import type { RolloutStoreFactory } from '../ports/rollout-store.js';
import type { ServiceManager } from '../ports/service-manager.js';
import type { Activation, ActivationDependencies } from './activation/activation.js';
import type { InterruptedActivation } from './activation/interrupted-activation.js';
import type { SlotEffects } from './activation/slot-effects.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import type { ControllerSettings, RolloutController } from './controller/rollout-controller.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine } from './layout/layout-engine.js';
import type { AgentUpgradeHandler } from './managed/agent-upgrade-handler.js';
import type { HostEffects } from './managed/host-effects.js';
import type { AgentVersionReport } from './managed/agent-version-report.js';
import type { ManagedSession, ManagedSessionFactory } from './managed/managed-session.js';
import type { RecoverDependencies } from './managed/recover.js';
import type { StartupGate } from './managed/startup-gate.js';
import type { MarkerStore } from './record/marker-store.js';
import type { RolloutControl } from './rollout/rollout-control.js';
import type { RecordStore } from './record/record-store.js';
import type { OperationStoreFactory, SessionOptions, SessionState } from './managed/session-options.js';
import type { StateStore } from './state/state-store.js';
import type { StatusDependencies } from './status/read-status.js';
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
  Logger: Symbol('Logger') as ServiceIdentifier<Logger>,
  // Ports: bound by exactly one platform module each.
  FileSystem: Symbol('FileSystem') as ServiceIdentifier<FileSystem>,
  Clock: Symbol('Clock') as ServiceIdentifier<Clock>,
  HostLock: Symbol('HostLock') as ServiceIdentifier<HostLock>,
  ArtifactSource: Symbol('ArtifactSource') as ServiceIdentifier<ArtifactSource>,
  ArchiveExtractor: Symbol('ArchiveExtractor') as ServiceIdentifier<ArchiveExtractor>,
  ProcessRunner: Symbol('ProcessRunner') as ServiceIdentifier<ProcessRunner>,
  ContainerRootfs: Symbol('ContainerRootfs') as ServiceIdentifier<ContainerRootfs>,
  ServiceManager: Symbol('ServiceManager') as ServiceIdentifier<ServiceManager>,
  OperationStoreFactory: Symbol('OperationStoreFactory') as ServiceIdentifier<OperationStoreFactory>,
  RolloutStoreFactory: Symbol('RolloutStoreFactory') as ServiceIdentifier<RolloutStoreFactory>,
  // The core: the use cases and what they share, one instance per process.
  Architecture: Symbol('Architecture') as ServiceIdentifier<HostArchitecture>,
  LayoutEngine: Symbol('LayoutEngine') as ServiceIdentifier<LayoutEngine>,
  RecordStore: Symbol('RecordStore') as ServiceIdentifier<RecordStore>,
  StateStore: Symbol('StateStore') as ServiceIdentifier<StateStore>,
  MarkerStore: Symbol('MarkerStore') as ServiceIdentifier<MarkerStore>,
  HostEffects: Symbol('HostEffects') as ServiceIdentifier<HostEffects>,
  SlotEffects: Symbol('SlotEffects') as ServiceIdentifier<SlotEffects>,
  InterruptedActivation: Symbol('InterruptedActivation') as ServiceIdentifier<InterruptedActivation>,
  ActivationDependencies: Symbol('ActivationDependencies') as ServiceIdentifier<ActivationDependencies>,
  Activation: Symbol('Activation') as ServiceIdentifier<Activation>,
  RecoverDependencies: Symbol('RecoverDependencies') as ServiceIdentifier<RecoverDependencies>,
  StatusDependencies: Symbol('StatusDependencies') as ServiceIdentifier<StatusDependencies>,
  ManagedSessionFactory: Symbol('ManagedSessionFactory') as ServiceIdentifier<ManagedSessionFactory>,
  Upgrader: Symbol('Upgrader') as ServiceIdentifier<Upgrader>,
  RolloutControl: Symbol('RolloutControl') as ServiceIdentifier<RolloutControl>,
  // One daemon session (a child container): its store, identity and the use cases built on them.
  OperationStore: Symbol('OperationStore') as ServiceIdentifier<OperationStore>,
  SessionOptions: Symbol('SessionOptions') as ServiceIdentifier<SessionOptions>,
  SessionState: Symbol('SessionState') as ServiceIdentifier<SessionState>,
  StartupGate: Symbol('StartupGate') as ServiceIdentifier<StartupGate>,
  AgentUpgradeHandler: Symbol('AgentUpgradeHandler') as ServiceIdentifier<AgentUpgradeHandler>,
  ManagedSession: Symbol('ManagedSession') as ServiceIdentifier<ManagedSession>,
  AgentVersionReport: Symbol('AgentVersionReport') as ServiceIdentifier<AgentVersionReport>,
});

/**
 * The rollout controller's process (createController): its own ports and use case, beside the
 * Logger and Clock of `Tokens`; an upgrader process binds none of these.
 */
export const ControllerTokens = Object.freeze({
  ControllerSettings: Symbol('ControllerSettings') as ServiceIdentifier<ControllerSettings>,
  ControllerCluster: Symbol('ControllerCluster') as ServiceIdentifier<ControllerCluster>,
  LeaseStore: Symbol('LeaseStore') as ServiceIdentifier<LeaseStore>,
  ControllerMetrics: Symbol('ControllerMetrics') as ServiceIdentifier<ControllerMetrics>,
  RolloutController: Symbol('RolloutController') as ServiceIdentifier<RolloutController>,
});
