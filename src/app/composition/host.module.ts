import { ContainerModule } from 'inversify';
import { TarGzExtractor } from '../../adapters/archive/tar-gz-extractor.js';
import { LazyArtifactSource } from '../../adapters/http/lazy-artifact-source.js';
import { FlockHostLock } from '../../adapters/lock/flock-host-lock.js';
import { NodeFileSystem } from '../../adapters/node/node-file-system.js';
import { NodeProcessRunner } from '../../adapters/node/node-process-runner.js';
import { SystemClock } from '../../adapters/node/system-clock.js';
import type { SlotLayout } from '../../domain/slot-layout.js';
import type { HostIdentity } from '../host-identity.js';
import { Tokens } from '../tokens.js';
import type { PortOverrides } from './port-overrides.js';

/**
 * The real host — node:fs, the system clock, the flock(1) lock, axios downloads, the tar.gz
 * extractor and child processes — unless an embedder overrides a port.
 */
export function hostModule(overrides: PortOverrides): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(Tokens.FileSystem).toConstantValue(overrides.fileSystem ?? new NodeFileSystem());
    bind(Tokens.Clock).toConstantValue(overrides.clock ?? new SystemClock());
    bind(Tokens.ArtifactSource).toConstantValue(overrides.artifactSource ?? new LazyArtifactSource());
    bind(Tokens.ArchiveExtractor).toConstantValue(overrides.archiveExtractor ?? new TarGzExtractor());
    bind(Tokens.ProcessRunner).toConstantValue(overrides.processRunner ?? new NodeProcessRunner());
    const lock = overrides.hostLock;
    if (lock !== undefined) bind(Tokens.HostLock).toConstantValue(lock);
    else {
      bind(Tokens.HostLock)
        .toResolvedValue(
          (layout: SlotLayout, identity: HostIdentity) =>
            new FlockHostLock(layout.lock, identity.command, { root: layout.root }),
          [Tokens.Layout, Tokens.HostIdentity],
        )
        .inSingletonScope();
    }
  });
}
