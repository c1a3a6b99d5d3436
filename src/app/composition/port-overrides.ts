import { ContainerModule, type ServiceIdentifier } from 'inversify';
import type { ArchiveExtractor } from '../../ports/archive-extractor.js';
import type { ArtifactSource } from '../../ports/artifact-source.js';
import type { Clock } from '../../ports/clock.js';
import type { ContainerRootfs } from '../../ports/container-rootfs.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { HostLock } from '../../ports/host-lock.js';
import type { OperationStore } from '../../ports/operation-store.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { RolloutStore } from '../../ports/rollout-store.js';
import type { ServiceManager } from '../../ports/service-manager.js';
import { Tokens } from '../tokens.js';
import { noRolloutStore } from './cluster-platform.module.js';

/** Ports an embedder (or a test) supplies instead of the ones its platform binds. */
export interface PortOverrides {
  readonly artifactSource?: ArtifactSource;
  readonly archiveExtractor?: ArchiveExtractor;
  readonly processRunner?: ProcessRunner;
  readonly containerRootfs?: ContainerRootfs;
  readonly fileSystem?: FileSystem;
  readonly clock?: Clock;
  readonly hostLock?: HostLock;
  readonly serviceManager?: ServiceManager;
  readonly operationStore?: OperationStore;
  /** The AgentRollouts of `agent-upgrade rollout …` (a MemoryRolloutStore in tests). */
  readonly rolloutStore?: RolloutStore;
}

/** Ports given as the instance but bound as a factory that opens them (the cluster is reached on first use). */
const OPENED_PORTS: ReadonlySet<keyof PortOverrides> = new Set(['operationStore', 'rolloutStore']);

/**
 * Every port of a process, as a platform binds them (the memory platform takes them all); a
 * platform without a rollout store has no AgentRollouts, as with `cluster.manager: "none"`.
 */
export type PlatformPorts = Required<Omit<PortOverrides, 'rolloutStore'>> & Pick<PortOverrides, 'rolloutStore'>;

/** Which token each overridable port is bound to. */
export const PORT_TOKENS: { readonly [K in keyof PortOverrides]-?: ServiceIdentifier<unknown> } = {
  artifactSource: Tokens.ArtifactSource,
  archiveExtractor: Tokens.ArchiveExtractor,
  processRunner: Tokens.ProcessRunner,
  containerRootfs: Tokens.ContainerRootfs,
  fileSystem: Tokens.FileSystem,
  clock: Tokens.Clock,
  hostLock: Tokens.HostLock,
  serviceManager: Tokens.ServiceManager,
  operationStore: Tokens.OperationStoreFactory,
  rolloutStore: Tokens.RolloutStoreFactory,
};

/** Loaded last: each given port replaces (`rebind`) what the platform bound for it. */
export function overridesModule(overrides: PortOverrides): ContainerModule {
  return new ContainerModule(({ rebind }) => {
    for (const [key, value] of Object.entries(overrides) as [keyof PortOverrides, unknown][]) {
      if (value === undefined) continue;
      rebind(PORT_TOKENS[key]).toConstantValue(OPENED_PORTS.has(key) ? async () => value : value);
    }
  });
}

/**
 * A platform of given port instances: the simulator's processes (the memory adapters) and an
 * embedder's fully custom host. The use cases on top are the production ones.
 */
export function portsModule(ports: PlatformPorts): ContainerModule {
  return new ContainerModule(({ bind }) => {
    for (const [key, value] of Object.entries(ports) as [keyof PortOverrides, unknown][]) {
      if (value === undefined) continue;
      bind(PORT_TOKENS[key]).toConstantValue(OPENED_PORTS.has(key) ? async () => value : value);
    }
    if (ports.rolloutStore === undefined) bind(Tokens.RolloutStoreFactory).toConstantValue(noRolloutStore);
  });
}
