import { ContainerModule, type ServiceIdentifier } from 'inversify';
import type { ArchiveExtractor } from '../../../ports/node/archive-extractor.js';
import type { ArtifactSource } from '../../../ports/common/artifact-source.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { HostLock } from '../../../ports/node/host-lock.js';
import type { OperationStore } from '../../../ports/node/operation-store.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { HealthProbe } from '../../../ports/node/health-probe.js';
import { NoHealthProbe } from '../../../adapters/node/none/no-health-probe.js';
import { Tokens } from '../tokens.js';

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
  /** One attempt of `health.probe`; a platform given none fails every attempt (NoHealthProbe). */
  readonly healthProbe?: HealthProbe;
  /** Instead of the TUF client the `trust` section configures; null turns signature checks off. */
  readonly releaseTrust?: ReleaseTrust | null;
}

/** Ports given as the instance but bound as a factory that opens them (the cluster is reached on first use). */
const OPENED_PORTS: ReadonlySet<keyof PortOverrides> = new Set(['operationStore']);

/** Every port of a process, as a platform binds them (the memory platform takes them all). */
export type PlatformPorts = Required<Omit<PortOverrides, 'releaseTrust' | 'healthProbe'>> &
  Pick<PortOverrides, 'releaseTrust' | 'healthProbe'>;

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
  healthProbe: Tokens.HealthProbe,
  releaseTrust: Tokens.ReleaseTrust,
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
    // A simulated host checks no signatures unless it was given a trust of its own.
    if (ports.releaseTrust === undefined) bind(Tokens.ReleaseTrust).toConstantValue(null);
    // Nor can it probe an agent unless it was given a probe: a configured probe then fails closed.
    if (ports.healthProbe === undefined) bind(Tokens.HealthProbe).toConstantValue(new NoHealthProbe());
  });
}
